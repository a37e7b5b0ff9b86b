import { describe, expect, it } from 'vitest';
import { documentChecker } from '@/test/helpers/openapi-check';
import { API_ROUTES } from './api-routes';
import { openApiDocument } from './openapi';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const doc = openApiDocument() as Doc;
const check = documentChecker(doc);

describe('the OpenAPI document from the route registry', () => {
  it('has every registered route once, with its own operation id', () => {
    const ops = Object.entries(doc.paths as Doc).flatMap(([path, methods]) => Object.entries(methods as Doc).map(([m, op]) => ({ path, m, id: (op as Doc).operationId })));
    expect(ops.map((o) => `${o.m} ${o.path}`).sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(new Set(ops.map((o) => o.id)).size).toBe(API_ROUTES.length);
    expect(doc.openapi).toBe('3.1.0');
  });

  it("names each route's auth: a cookie or a token, with routeCaller's 401 and 503, and 403 above viewer — none for the document itself", () => {
    for (const r of API_ROUTES) {
      const op = check.operation(r.path, r.method) as Doc;
      if (r.auth === 'none') {
        expect(op.security).toEqual([]);
        continue;
      }
      if (r.auth === 'metrics') {
        // this machine without a credential, or a metrics token; its own 401 and 503
        expect(op.security).toEqual([{}, { metricsToken: [] }]);
        expect(Object.keys(op.responses as Doc)).toEqual(['200', '401', '503']);
        continue;
      }
      expect(op.security).toEqual([{ sessionCookie: [] }, { bearerToken: [] }]);
      expect(op['x-aqven-role']).toBe(r.auth);
      for (const s of ['401', '503']) expect(Object.keys(op.responses as Doc)).toContain(s);
      // every caller is a viewer at least: only a route above it can answer 403
      expect(Object.keys(op.responses as Doc).includes('403'), r.id).toBe(r.auth !== 'viewer');
    }
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['sessionCookie', 'bearerToken', 'metricsToken']);
  });

  it('gives every error its codes, and the body schema allows exactly those', () => {
    for (const r of API_ROUTES) {
      for (const [status, answer] of Object.entries(check.operation(r.path, r.method)!.responses as Doc)) {
        if (Number(status) < 400) continue;
        const codes = (answer as Doc)['x-codes'] as string[];
        expect(codes?.length, `${r.id} ${status}`).toBeGreaterThan(0);
        // the ambiguous run id's 409 also lists the runs it could mean
        const more = codes.includes('E_AMBIGUOUS_RUN_ID') ? { matches: [], more: false } : {};
        for (const code of codes) expect(check.errors(r.path, r.method, Number(status), { error: 'x', code, ...more }), `${r.id} ${status} ${code}`).toBeNull();
        expect(check.errors(r.path, r.method, Number(status), { error: 'x', code: 'E_NOT_A_CODE' })).not.toBeNull();
        expect(check.errors(r.path, r.method, Number(status), { error: 'x' })).not.toBeNull();
      }
    }
  });

  it("documents POST /api/runs's Prefer, Idempotency-Key and traceparent, its 200 with Preference-Applied, its 409 and 422", () => {
    const op = check.operation('/api/runs', 'post') as Doc;
    expect(op.parameters.filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)).toEqual(['Prefer', 'Idempotency-Key', 'traceparent']);
    expect(Object.keys(op.responses[200].headers)).toEqual(['Preference-Applied', 'Location', 'Idempotent-Replayed']);
    expect(op.responses[422]['x-codes']).toEqual(['E_IDEMPOTENCY_KEY_REUSED']);
    expect(op.responses[409]['x-codes']).toEqual(['E_IDEMPOTENCY_IN_FLIGHT']);
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['flow']);
  });

  it('validates a run record against its component, and refuses one without its fields', () => {
    const usage = { inputTokens: 1, outputTokens: 2, costUsd: 0 };
    const record = {
      id: 'r',
      flow: 'triage',
      kind: 'flow',
      replayOf: null,
      replayNode: null,
      status: 'succeeded',
      input: {},
      output: { a: 1 },
      error: null,
      usage,
      usageUnknown: false,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
      startedBy: null,
      projectHash: null,
      snapshotId: null,
      nodes: [{ id: 'n', agent: 'a', turn: 1, status: 'succeeded', output: null, error: null, usage, attempts: [], budget: { retries: 0, models: [] } }],
    };
    expect(check.errors('/api/runs/{id}', 'get', 200, record)).toBeNull();
    expect(check.errors('/api/runs', 'post', 200, record)).toBeNull();
    // the trace id is there when the run has a trace, and may be absent
    expect(check.errors('/api/runs/{id}', 'get', 200, { ...record, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' })).toBeNull();
    expect(check.errors('/api/runs/{id}', 'get', 200, { ...record, status: 'done' })).toMatch(/status/);
    const { nodes: _, ...noNodes } = record;
    expect(check.errors('/api/runs/{id}', 'get', 200, noNodes)).toMatch(/nodes/);
  });
});
