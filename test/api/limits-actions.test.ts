// Structural limits from the dashboard (DESIGN: Structural limits, "On the dashboard"): an editor
// starts a probe of a model of the showcase (its simulator plays the declared limits), GET
// /api/limits shows it running and then the levels it measured, any role may read them, only
// editors may start one, a model can be probed once at a time, and bad form values are refused
// on their field before anything runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, createUser } from '@/db/account-queries';
import { getRunFacts } from '@/db/queries';
import type { Db } from '@/db/types';
import type { LimitsResponse } from '@/lib/dashboard/limits-view';
import type { StartLimitsState } from '@/lib/forms/limits';
import { FLASH_LITE } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { requestHeaders, signedInUser } from '../helpers/session-cookie';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const dashboard = simulatedDashboard();
const MODEL = `openrouter:${FLASH_LITE}`;
let db: Db;

const { server } = dashboard;
const as = (token: string | null) => {
  req.headers = requestHeaders(LOCAL_HEADERS, token);
};
const form = (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
};
const IDLE: StartLimitsState = { status: 'idle' };
const start = async (fields: Record<string, string>) =>
  (await import('@/lib/actions/start-limits')).startLimitsAction(IDLE, form({ model: MODEL, dimension: 'depth', trials: '4', maxCalls: '100', maxCost: '1', ...fields }));
const getLimits = async (token: string | null, query = `model=${encodeURIComponent(MODEL)}`) => {
  const { GET } = await import('@/app/api/limits/route');
  const url = `http://localhost/api/limits?${query}`;
  const res = await GET(Object.assign(new Request(url, { headers: requestHeaders(LOCAL_HEADERS, token) }), { nextUrl: new URL(url) }) as never);
  return { status: res.status, body: (await res.json()) as LimitsResponse & { error?: string } };
};

beforeAll(async () => {
  const { session: s } = await dashboard.open();
  db = s.db;
  // the declared limits alone decide the answers: no chaos faults to blur a level
  s.simulated!.sim.setChaos(undefined);
}, 90_000);

afterAll(() => dashboard.close());

describe('limits from the dashboard', () => {
  it('an editor starts a probe; GET /api/limits shows it running, then the depth the simulator declares', async () => {
    as(null);
    const started = await start({});
    expect(started).toMatchObject({ status: 'started', model: MODEL });
    const first = await getLimits(null);
    expect(first.status).toBe(200);
    const [probe] = first.body.probes;
    expect(probe).toMatchObject({ model: MODEL, dimensions: ['depth'], maxCalls: 100, maxCostUsd: 1 });
    expect(probe!.runId).toMatch(/^[0-9a-f-]{36}$/);
    // a second start of the same model while it runs is refused
    if (!(await getLimits(null)).body.probes[0]!.done) expect(await start({})).toMatchObject({ status: 'error', code: 'E_BUSY' });

    let body = first.body;
    for (const end = Date.now() + 60_000; !body.probes[0]!.done && Date.now() < end; await new Promise((r) => setTimeout(r, 50))) body = (await getLimits(null)).body;
    expect(body.probes[0]).toMatchObject({ done: true, stopped: null, current: null });
    expect(body.probes[0]!.calls).toBeGreaterThan(0);
    expect(body.probes[0]!.calls).toBeLessThanOrEqual(100);
    // showcase/aqven.yaml declares depth 5 for the flash-lite
    const [depth] = body.models[0]!.dimensions;
    expect(depth).toMatchObject({ dimension: 'depth', status: 'complete', lastHeld: 5, firstFailed: 6, trials: 4, runId: probe!.runId });
    const levels = depth!.levels.map((l) => [l.level, l.held]);
    expect(levels).toContainEqual([5, true]);
    expect(levels).toContainEqual([6, false]);
    // each level's rates with their interval, out of the answered trials
    const six = depth!.levels.find((l) => l.level === 6)!;
    expect(six.firstTry.low).toBeLessThanOrEqual(six.firstTry.value);
    expect(six.firstTry.high).toBeGreaterThanOrEqual(six.firstTry.value);
    // the probe is a run of kind limits, ended
    expect(await getRunFacts(db, probe!.runId!)).toMatchObject({ kind: 'limits', status: 'succeeded' });
    // the agent page lists the node of the extractor that asks deeper than that: the catalogue, 7 deep, not the order
    const { agentLimitWarnings } = await import('@/lib/server/limits-probe');
    const s = await (await server()).serverSession();
    const warnings = await agentLimitWarnings(db, s.project, 'extractor');
    expect(warnings.map((w) => [w.flow, w.node, w.file])).toEqual([['order-intake', 'catalogue', 'flows/order-intake.yaml']]);
    expect(warnings[0]!.message).toContain('nests 7 levels deep');
    expect(await agentLimitWarnings(db, s.project, 'writer')).toEqual([]);
  }, 90_000);

  it('refuses bad values on their field, and a model that is not the project’s, before anything runs', async () => {
    as(null);
    expect(await start({ trials: '0' })).toMatchObject({ status: 'error', field: 'trials', code: 'E_FORM' });
    expect(await start({ maxCalls: '1' })).toMatchObject({ status: 'error', field: 'maxCalls' });
    expect(await start({ maxCost: '-1' })).toMatchObject({ status: 'error', field: 'maxCost' });
    expect(await start({ dimension: 'width' })).toMatchObject({ status: 'error', field: 'dimension' });
    expect(await start({ model: 'openrouter:nobody/unknown' })).toMatchObject({ status: 'error', field: 'model', code: 'E_MODEL' });
  });

  it('only an editor may start one; any role may read them', async () => {
    const now = Date.now();
    await createUser(db, { name: 'ana', role: 'admin', password: 'a long enough password' }, now);
    const editor = await signedInUser(db, 'limits-editor', 'editor', now);
    const viewer = await signedInUser(db, 'limits-viewer', 'viewer', now);
    const viewerToken = (await createToken(db, { name: 'limits-viewer', role: 'viewer', createdBy: 'ana', expiresAt: null }, now)).token;
    as(viewer);
    expect(await start({ dimension: 'enum' })).toMatchObject({ status: 'error', code: 'E_FORBIDDEN' });
    // a token is for the API: it reads them, and a form refuses it whatever its role
    as(viewerToken);
    expect(await start({ dimension: 'enum' })).toMatchObject({
      status: 'error',
      code: 'E_FORBIDDEN',
      message: 'API tokens are accepted by the /api routes only: sign in to use the dashboard',
    });
    const read = await getLimits(viewerToken);
    expect(read.status).toBe(200);
    expect((await getLimits(viewer)).status).toBe(200);
    expect(read.body.models[0]!.dimensions.map((d) => d.dimension)).toEqual(['depth']);
    expect((await getLimits(null)).status).toBe(401);
    // a token the dashboard does not know is told apart from no sign-in at all
    const bogus = await getLimits('aqv_not_a_token_at_all');
    expect(bogus.status).toBe(401);
    expect(bogus.body.error).toBe('the API token is not valid: unknown, revoked or expired (aqven token list shows yours)');
    expect((await getLimits(null)).body.error).toBe('sign in first');
    expect((await getLimits(viewer, '')).status).toBe(400);
    as(editor);
    expect(await start({ dimension: 'enum', trials: '2', maxCalls: '6' })).toMatchObject({ status: 'started' });
    // the call budget stops it, and what it measured is kept (partial)
    let body = (await getLimits(editor)).body;
    for (const end = Date.now() + 60_000; !body.probes[0]!.done && Date.now() < end; await new Promise((r) => setTimeout(r, 50))) body = (await getLimits(editor)).body;
    expect(body.probes[0]).toMatchObject({ done: true, stopped: expect.stringContaining('call budget') });
    expect(body.probes[0]!.calls).toBeLessThanOrEqual(6);
    expect(body.models[0]!.dimensions.find((d) => d.dimension === 'enum')).toMatchObject({ status: 'partial' });
  }, 90_000);
});
