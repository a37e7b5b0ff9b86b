// Wait for the answer (DESIGN: The dashboard, "Calling AQVEN from a service"): `POST /api/runs` with
// `Prefer: wait=N` answers 200 and the run record when the run ends within N seconds, else 202
// with Location once N seconds have passed; `GET /api/runs/:id?wait=N` holds the record until the
// run ends. SQLite mode (the run in this process), followed through the database; the bounds on
// elapsed time are loose on purpose (a busy machine), the ordering claims are not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import { interruptAll } from '@/lib/flow/active-runs';
import { getRun, postRun } from '../helpers/api-call';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let db: Db;
const slow = (ms: number) => ({ kind: 'ok' as const, latency: { first_token_ms: ms } });

beforeAll(async () => {
  ({
    session: { db },
  } = await dashboard.open());
}, 90_000);
afterAll(async () => {
  await interruptAll('the test is over', 0);
  await dashboard.close();
});

const script = async (scripts: Record<string, ReturnType<typeof slow>[]>) => (await (await dashboard.server()).serverSession()).simulated!.sim.loadScripts(scripts);
const TRIAGE = { flow: 'triage', input: { ticket: 'my invoice is wrong' } };

describe('Prefer: wait=N on POST /api/runs, ?wait=N on GET /api/runs/:id (SQLite)', () => {
  it('a run that ends in about 1 s with wait=5: 200, the run record, Preference-Applied and Location', async () => {
    await script({ [FLASH_LITE]: [slow(500)], [GPT_OSS]: [slow(500)] });
    const res = await postRun<{ id: string; status: string; nodes: unknown[] }>(TRIAGE, { prefer: 'wait=5' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', flow: 'triage' });
    expect(res.body.nodes.length).toBeGreaterThan(0);
    expect(res.headers.get('preference-applied')).toBe('wait=5');
    expect(res.headers.get('location')).toBe(`/api/runs/${res.body.id}`);
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(5000);
  });

  it('a run that takes 10 s with wait=2: 202 with Location after about 2 s; GET ?wait=1 answers the live record after about 1 s', async () => {
    await script({ [FLASH_LITE]: [slow(10_000)] });
    const res = await postRun<{ id: string }>(TRIAGE, { prefer: 'respond-async, wait=2' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/runs/${res.body.id}`);
    expect(res.headers.get('preference-applied')).toBeNull();
    expect(res.ms).toBeGreaterThanOrEqual(1900);
    expect(res.ms).toBeLessThan(6000);
    const live = await getRun<{ status: string }>(res.body.id, '?wait=1');
    expect(live.status).toBe(200);
    expect(live.body.status).toBe('running');
    expect(live.ms).toBeGreaterThanOrEqual(900);
  });

  it('GET ?wait=10 answers once a running run ends, long before the wait runs out', async () => {
    await script({ [FLASH_LITE]: [slow(1200)], [GPT_OSS]: [slow(0)] });
    const started = await postRun<{ id: string }>(TRIAGE);
    expect(started.status).toBe(202);
    const ended = await getRun<{ status: string }>(started.body.id, '?wait=10');
    expect(ended.status).toBe(200);
    expect(ended.body.status).toBe('succeeded');
    expect(ended.ms).toBeLessThan(9000);
    // an ended run is answered at once, whatever the wait
    const again = await getRun<{ status: string }>(started.body.id, '?wait=30');
    expect(again).toMatchObject({ status: 200, body: { status: 'succeeded' } });
    expect(again.ms).toBeLessThan(2000);
  });

  it('a client that goes away stops the wait', async () => {
    await script({ [FLASH_LITE]: [slow(10_000)] });
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 300);
    const res = await postRun(TRIAGE, { prefer: 'wait=30' }, gone.signal);
    expect(res.status).toBe(202);
    expect(res.ms).toBeLessThan(5000);
  });

  it('refuses a wait that is no whole number of seconds (E_WAIT, 400) at both doors; more than 60 waits 60', async () => {
    for (const prefer of ['wait=soon', 'wait=-1', 'wait=1.5', 'wait=']) {
      const res = await postRun(TRIAGE, { prefer });
      expect(res, prefer).toMatchObject({ status: 400, body: { code: 'E_WAIT' } });
    }
    const before = (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;
    await postRun(TRIAGE, { prefer: 'wait=x' });
    expect((await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length).toBe(before); // nothing started
    const any = (await db.q.select({ id: db.t.runs.id }).from(db.t.runs).limit(1))[0]!.id;
    expect(await getRun(any, '?wait=forever')).toMatchObject({ status: 400, body: { code: 'E_WAIT', error: expect.stringMatching(/^\?wait must be a whole number/) } });

    await script({ [FLASH_LITE]: [slow(0)], [GPT_OSS]: [slow(0)] });
    const capped = await postRun(TRIAGE, { prefer: 'wait=600' });
    expect(capped.status).toBe(200);
    expect(capped.headers.get('preference-applied')).toBe('wait=60');
  });
});
