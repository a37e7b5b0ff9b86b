import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '@/lib/contracts/api-routes';
import { apiReference } from './api-reference';

describe('the HTTP API reference', () => {
  const api = apiReference();

  it('has every route of the API, with its method and path', () => {
    expect(api.operations.map((o) => `${o.method} ${o.path}`).sort()).toEqual(API_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort());
  });

  it('says who may call a route, its parameters, its body and its answers', () => {
    const start = api.operations.find((o) => o.method === 'POST' && o.path === '/api/runs')!;
    expect(start.access).toMatch(/role editor or above/);
    expect(start.params.map((p) => `${p.in}:${p.name}`)).toContain('header:Idempotency-Key');
    expect(start.body).not.toBeNull();
    expect(start.responses.map((r) => r.status)).toEqual(expect.arrayContaining(['200', '202', '401', '429']));
    const ok = start.responses.find((r) => r.status === '200')!;
    expect(ok.content[0]).toEqual({ mediaType: 'application/json', schema: { ref: 'RunRecord' } });
    expect(ok.headers.map((h) => h.name)).toContain('Idempotent-Replayed');

    const get = api.operations.find((o) => o.method === 'GET' && o.path === '/api/runs/{id}')!;
    expect(get.params.find((p) => p.name === 'id')).toMatchObject({ in: 'path', required: true });
    expect(api.operations.find((o) => o.path === '/api/openapi.json')!.access).toBe('anyone: no credential');
  });

  it('has each named schema', () => {
    expect(api.components.map((c) => c.name)).toContain('RunRecord');
    expect(JSON.parse(api.components.find((c) => c.name === 'RunRecord')!.json)).toHaveProperty('properties');
  });
});
