// The API described (DESIGN: The dashboard, "The API described"): GET /api/openapi.json is served
// by its route, then every registered route is called — its success and each error it documents —
// and every real answer is validated against the document (test/helpers/openapi-check.ts). Last,
// every (route, status) the document names was seen here, but for the few listed in NOT_HERE with
// where they are provoked instead.
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '@/db/account-queries';
import { claimKey } from '@/db/idempotency-queries';
import { insertReplayBatch } from '@/db/replay-batch-queries';
import { addSpend } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { API_ROUTES } from '@/lib/contracts/api-routes';
import type { ApiRoute } from '@/lib/contracts/api-route';
import { startFingerprint } from '@/lib/server/idempotent-start';
import { peerStamp } from '@/lib/shared/peer';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';
import { documentChecker } from '../helpers/openapi-check';
import { runEnded } from '../helpers/run-ended';
import { requestHeaders, signedInUser } from '../helpers/session-cookie';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

/** answers the document names that this file does not provoke, and where they are */
const NOT_HERE: Record<string, string> = {
  503: 'who is asking cannot be read, or the run cannot be recorded: a database that is down (test/api/storage-down.test.ts)',
  'post /api/sim/scripts 409': 'a session without a simulator while AQVEN_SIMULATE=1: not one process can have both',
};

const dashboard = simulatedDashboard();
let db: Db;
let check: ReturnType<typeof documentChecker>;
const seen = new Set<string>();
const cred: Record<'viewer' | 'editor' | 'budgeted' | 'limited', string> = { viewer: '', editor: '', budgeted: '', limited: '' };
const TRIAGE = { flow: 'triage', input: { ticket: 'my invoice is wrong' } };

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;
const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  '/api/runs': () => import('@/app/api/runs/route'),
  '/api/runs/{id}': () => import('@/app/api/runs/[id]/route'),
  '/api/runs/{id}/detail': () => import('@/app/api/runs/[id]/detail/route'),
  '/api/runs/{id}/notes': () => import('@/app/api/runs/[id]/notes/route'),
  '/api/runs/{id}/events': () => import('@/app/api/runs/[id]/events/route'),
  '/api/pauses': () => import('@/app/api/pauses/route'),
  '/api/limits': () => import('@/app/api/limits/route'),
  '/api/replays/{batchId}': () => import('@/app/api/replays/[batchId]/route'),
  '/api/sim/scripts': () => import('@/app/api/sim/scripts/route'),
  '/api/openapi.json': () => import('@/app/api/openapi.json/route'),
  '/metrics': () => import('@/app/metrics/route'),
};

interface Call {
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** the credential: a cookie or a token; null: none */
  as?: string | null;
}

/** Calls `route` as a client would, checks the answer against the document, and gives its status and body. */
async function call(route: ApiRoute, c: Call = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> | null }> {
  const mod = await MODULES[route.path]!();
  const handler = mod[route.method.toUpperCase()] as Handler;
  const path = route.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(c.params?.[k] ?? ''));
  const headers = { ...requestHeaders(LOCAL_HEADERS, c.as === undefined ? cred.editor : c.as), ...c.headers };
  const init =
    c.body === undefined
      ? { headers }
      : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) };
  const res = await handler(new NextRequest(`http://localhost${path}${c.query ?? ''}`, init), { params: Promise.resolve(c.params ?? {}) });
  const type = res.headers.get('content-type') ?? '';
  seen.add(`${route.method} ${route.path} ${res.status}`);
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    expect(check.operation(route.path, route.method)!.responses).toHaveProperty([String(res.status), 'content', 'text/event-stream']);
    return { status: res.status, headers: res.headers, body: null };
  }
  if (type.startsWith('text/plain')) {
    expect(check.operation(route.path, route.method)!.responses).toHaveProperty([String(res.status), 'content', type]);
    return { status: res.status, headers: res.headers, body: { text: await res.text() } };
  }
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  if (body === null)
    expect(
      (check.operation(route.path, route.method)!.responses as Record<string, { content?: unknown }>)[String(res.status)]?.content,
      `${route.id} ${res.status}`,
    ).toBeUndefined();
  else expect(check.errors(route.path, route.method, res.status, body), `${route.id} ${res.status}: ${text.slice(0, 300)}`).toBeNull();
  return { status: res.status, headers: res.headers, body };
}

const R = Object.fromEntries(API_ROUTES.map((r) => [r.id, r as ApiRoute])) as Record<string, ApiRoute>;

beforeAll(async () => {
  ({
    session: { db },
  } = await dashboard.open({ scripts: { [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] } }));
  const mod = await import('@/app/api/openapi.json/route');
  const served = mod.GET();
  expect(served.status).toBe(200);
  check = documentChecker((await served.json()) as Record<string, unknown>);
  cred.viewer = await signedInUser(db, 'vera', 'viewer');
  cred.editor = await signedInUser(db, 'ed', 'editor');
  const token = async (name: string) => (await createToken(db, { name, role: 'editor', createdBy: 'ed', expiresAt: null, budgetUsdPerDay: 1 }, Date.now())).token;
  cred.budgeted = await token('budgeted');
  cred.limited = await token('limited');
  await addSpend(db, db.q, 'token:budgeted', 1, Date.now());
}, 90_000);
afterAll(() => dashboard.close());

describe('every route against GET /api/openapi.json', () => {
  let runId = '';

  it('POST /api/runs: 202, 200 with a wait, and each refusal', async () => {
    const started = await call(R.startRun!, { body: TRIAGE });
    expect(started.status).toBe(202);
    runId = started.body!.id as string;
    await runEnded(db, runId);
    expect((await call(R.startRun!, { body: TRIAGE, headers: { prefer: 'wait=10' } })).status).toBe(200);
    const refusals: [Call, number, string][] = [
      [{ body: 'not json' }, 400, 'E_BODY'],
      [{ body: { input: {} } }, 400, 'E_FLOW'],
      [{ body: { flow: 'triage', input: { ticket: 3 } } }, 400, 'E_INPUT'],
      [{ body: TRIAGE, headers: { prefer: 'wait=later' } }, 400, 'E_WAIT'],
      [{ body: TRIAGE, headers: { 'idempotency-key': 'x'.repeat(300) } }, 400, 'E_IDEMPOTENCY_KEY'],
      [{ body: { flow: 'nope' } }, 404, 'E_FLOW'],
      [{ body: TRIAGE, as: null }, 401, 'E_AUTH'],
      [{ body: TRIAGE, as: cred.viewer }, 403, 'E_FORBIDDEN'],
      [{ body: TRIAGE, as: cred.budgeted }, 429, 'E_BUDGET'],
    ];
    for (const [c, status, code] of refusals) expect(await call(R.startRun!, c), code).toMatchObject({ status, body: { code } });
    // a key used with another body; a key another request holds while it starts its run
    await call(R.startRun!, { body: TRIAGE, headers: { 'idempotency-key': 'k-1' } });
    expect(await call(R.startRun!, { body: { ...TRIAGE, input: { ticket: 'other' } }, headers: { 'idempotency-key': 'k-1' } })).toMatchObject({ status: 422 });
    await claimKey(db, { caller: 'ed', key: 'k-2', fingerprint: startFingerprint(TRIAGE.flow, TRIAGE.input), now: Date.now() });
    const inFlight = await call(R.startRun!, { body: TRIAGE, headers: { 'idempotency-key': 'k-2' } });
    expect(inFlight).toMatchObject({ status: 409, body: { code: 'E_IDEMPOTENCY_IN_FLIGHT' } });
    expect(inFlight.headers.get('retry-after')).toBe('1');
    process.env.AQVEN_RUNS_PER_MINUTE = '1';
    process.env.AQVEN_MAX_BODY_BYTES = '64';
    try {
      expect(await call(R.startRun!, { body: { ...TRIAGE, input: { ticket: 'x'.repeat(100) } }, as: cred.limited })).toMatchObject({ status: 413, body: { code: 'E_BODY' } });
      expect(await call(R.startRun!, { body: TRIAGE, as: cred.limited })).toMatchObject({ status: 429, body: { code: 'E_LIMIT' } });
    } finally {
      delete process.env.AQVEN_RUNS_PER_MINUTE;
      delete process.env.AQVEN_MAX_BODY_BYTES;
    }
  }, 60_000);

  it('the routes that name a run: the run, a bad query, an unknown id, an ambiguous prefix, nobody signed in', async () => {
    const named = ['getRun', 'getRunFacts', 'listRunNotes', 'followRun'].map((id) => R[id]!);
    for (const route of named) {
      expect((await call(route, { params: { id: runId } })).status, route.id).toBe(200);
      expect((await call(route, { params: { id: 'deadbeef' } })).status, route.id).toBe(404);
      // every run of this file started within the same minutes: their time-ordered ids share their first characters
      expect((await call(route, { params: { id: runId.slice(0, 4) } })).status, route.id).toBe(409);
      expect((await call(route, { params: { id: runId }, as: null })).status, route.id).toBe(401);
    }
    expect((await call(R.getRun!, { params: { id: runId }, query: '?wait=2', as: cred.viewer })).status).toBe(200);
    expect(await call(R.getRun!, { params: { id: runId }, query: '?wait=x' })).toMatchObject({ status: 400, body: { code: 'E_WAIT' } });
    expect(await call(R.listRunNotes!, { params: { id: runId }, query: '?limit=0' })).toMatchObject({ status: 400, body: { code: 'E_QUERY' } });
    expect(await call(R.followRun!, { params: { id: runId }, headers: { 'last-event-id': 'not-an-id' } })).toMatchObject({ status: 400, body: { code: 'E_EVENT_ID' } });
    // a client whose cursor already holds the run's end
    const { readEvents } = await import('../helpers/run-event-stream');
    const { GET } = await import('@/app/api/runs/[id]/events/route');
    const all = await readEvents(
      await GET(new NextRequest(`http://localhost/api/runs/${runId}/events`, { headers: requestHeaders(LOCAL_HEADERS, cred.editor) }), { params: Promise.resolve({ id: runId }) }),
    );
    expect((await call(R.followRun!, { params: { id: runId }, headers: { 'last-event-id': all.events.at(-1)!.id } })).status).toBe(204);
  }, 60_000);

  it('the run list, pauses, limits, replay batches, the simulator, the document', async () => {
    expect((await call(R.listRuns!)).status).toBe(200);
    expect(await call(R.listRuns!, { query: '?status=nope' })).toMatchObject({ status: 400, body: { code: 'E_QUERY' } });
    expect((await call(R.listRuns!, { as: null })).status).toBe(401);
    expect((await call(R.listPauses!)).status).toBe(200);
    expect((await call(R.listPauses!, { as: null })).status).toBe(401);
    expect((await call(R.getModelLimits!, { query: `?model=${encodeURIComponent(`openrouter:${FLASH_LITE}`)}` })).status).toBe(200);
    expect(await call(R.getModelLimits!)).toMatchObject({ status: 400, body: { code: 'E_QUERY' } });
    expect((await call(R.getModelLimits!, { as: null })).status).toBe(401);
    const now = Date.now();
    const progress = {
      total: 1,
      concurrency: 1,
      capUsd: null,
      spentUsd: 0,
      counts: { queued: 0, running: 0, succeeded: 1, failed: 0, refused: 0 },
      peakRunning: 1,
      done: true,
      stopped: null,
      items: [],
    };
    await insertReplayBatch(
      db,
      { id: 'batch-1', label: 'sig', startedBy: 'ed', startedAt: now, owner: 'gone', total: 1, succeeded: 1, spentUsd: 0, capUsd: null, stopped: null, progress },
      now,
    );
    expect((await call(R.getReplayBatch!, { params: { batchId: 'batch-1' } })).status).toBe(200);
    expect(await call(R.getReplayBatch!, { params: { batchId: 'nope' } })).toMatchObject({ status: 404, body: { code: 'E_BATCH' } });
    expect((await call(R.getReplayBatch!, { params: { batchId: 'batch-1' }, as: null })).status).toBe(401);
    expect((await call(R.loadSimScripts!, { body: { scripts: {} } })).status).toBe(200);
    expect(await call(R.loadSimScripts!, { body: '{' })).toMatchObject({ status: 400, body: { code: 'E_BODY' } });
    expect(await call(R.loadSimScripts!, { body: { scripts: { m: [{ kind: 'nonsense' }] } } })).toMatchObject({ status: 400, body: { code: 'E_SCRIPT' } });
    expect((await call(R.loadSimScripts!, { body: { scripts: {} }, as: null })).status).toBe(401);
    expect((await call(R.loadSimScripts!, { body: { scripts: {} }, as: cred.viewer })).status).toBe(403);
    process.env.AQVEN_MAX_BODY_BYTES = '8';
    try {
      expect(await call(R.loadSimScripts!, { body: { scripts: {} } })).toMatchObject({ status: 413, body: { code: 'E_BODY' } });
    } finally {
      delete process.env.AQVEN_MAX_BODY_BYTES;
    }
    delete process.env.AQVEN_SIMULATE;
    try {
      expect(await call(R.loadSimScripts!, { body: { scripts: {} } })).toMatchObject({ status: 404, body: { code: 'E_NOT_SIMULATED' } });
    } finally {
      process.env.AQVEN_SIMULATE = '1';
    }
    expect((await call(R.getOpenApi!, { as: null })).status).toBe(200);
  }, 60_000);

  it('GET /metrics: from this machine with no credential, from elsewhere with a metrics token; an API token or none from elsewhere is 401', async () => {
    const local = await call(R.getMetrics!, { as: null });
    expect(local.status).toBe(200);
    expect(local.body!.text).toMatch(/^# TYPE aqven_attempts_total counter$/m);
    const elsewhere = peerStamp({ address: '203.0.113.9', forwardedFor: null, proxied: false });
    const metricsToken = (await createToken(db, { name: 'prometheus', role: 'viewer', createdBy: 'ed', expiresAt: null, scope: 'metrics' }, Date.now())).token;
    expect((await call(R.getMetrics!, { as: metricsToken, headers: elsewhere })).status).toBe(200);
    for (const as of [null, cred.limited, cred.editor]) {
      const refused = await call(R.getMetrics!, { as, headers: elsewhere });
      expect(refused).toMatchObject({ status: 401, body: { code: 'E_AUTH' } });
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    }
    // and the metrics token reads nothing else
    expect(await call(R.listRuns!, { as: metricsToken })).toMatchObject({ status: 401, body: { code: 'E_AUTH' } });
  }, 60_000);

  it('saw every answer the document names, but those provoked elsewhere', () => {
    const named: string[] = [];
    for (const r of API_ROUTES) for (const status of Object.keys(check.operation(r.path, r.method)!.responses as object)) named.push(`${r.method} ${r.path} ${status}`);
    const missing = named.filter((k) => !seen.has(k) && !(k in NOT_HERE) && !(k.split(' ')[2]! in NOT_HERE));
    expect(missing).toEqual([]);
    const undocumented = [...seen].filter((k) => !named.includes(k));
    expect(undocumented).toEqual([]);
  });
});
