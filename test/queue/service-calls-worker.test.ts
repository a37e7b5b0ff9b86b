// Calling AQVEN from a service on PostgreSQL (DESIGN: The dashboard, "Calling AQVEN from a
// service"): the dashboard queues the run (POST /api/runs in this process) and a real `aqven
// worker` process runs it; `Prefer: wait=N` follows the run through the database to its end — 200
// and the record, or 202 once N seconds have passed — and an Idempotency-Key sent twice at once
// queues one run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import { startSimulator, type SimServer } from '@/lib/sim';
import { ensureCliBuilt } from '../cli/aqven-process';
import { getRun, postRun } from '../helpers/api-call';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase, FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { closeDashboardAndWorker, startWorker, type WorkerProcess } from './workers';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
let tdb: TestDatabase;
let sim: SimServer;
let worker: WorkerProcess;
let db: Db;
const slow = (ms: number) => ({ kind: 'ok' as const, latency: { first_token_ms: ms } });
const TRIAGE = { flow: 'triage', input: { ticket: 'my invoice is wrong' } };
const runIds = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).map((r) => r.id);

beforeAll(async () => {
  ensureCliBuilt();
  tdb = await testDatabase({ migrated: true });
  sim = await startSimulator({});
  const dir = copyShowcase();
  process.env.AQVEN_PROJECT = dir;
  process.env.AQVEN_SIMULATE = '1';
  process.env.AQVEN_DATABASE_URL = tdb.url;
  db = (await (await import('@/lib/server/session')).serverSession()).db;
  worker = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 2, drainTimeout: 1 });
}, 120_000);

afterAll(() => closeDashboardAndWorker({ worker, sim, tdb, restoreEnv }), 60_000);

describe('POST /api/runs on PostgreSQL, the run in a worker process', () => {
  it('a run that ends in about 1 s with wait=5: 200 and its record; the same key again answers it and queues nothing', async () => {
    sim.loadScripts({ [FLASH_LITE]: [slow(500)], [GPT_OSS]: [slow(500)] });
    const key = { 'idempotency-key': 'ticket-4711', prefer: 'wait=5' };
    const res = await postRun<{ id: string; status: string; snapshotId: number | null }>(TRIAGE, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded' });
    expect(res.body.snapshotId).toBeGreaterThan(0); // run by the worker, from the queue
    expect(res.headers.get('preference-applied')).toBe('wait=5');
    expect(res.ms).toBeLessThan(5000);
    const again = await postRun<{ id: string }>(TRIAGE, key);
    expect(again).toMatchObject({ status: 200, body: { id: res.body.id } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await runIds()).toEqual([res.body.id]);
  }, 60_000);

  it('a run that takes 10 s with wait=2: 202 after about 2 s; GET ?wait=1 answers it still running', async () => {
    sim.loadScripts({ [FLASH_LITE]: [slow(10_000)] });
    const res = await postRun<{ id: string }>(TRIAGE, { prefer: 'wait=2' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/runs/${res.body.id}`);
    expect(res.ms).toBeGreaterThanOrEqual(1900);
    expect(res.ms).toBeLessThan(6000);
    const live = await getRun<{ status: string }>(res.body.id, '?wait=1');
    expect(live.status).toBe(200);
    expect(['queued', 'running']).toContain(live.body.status);
  }, 60_000);

  it('two concurrent requests with one key queue one run; another body with the key is 422', async () => {
    sim.loadScripts({ [FLASH_LITE]: [slow(0)], [GPT_OSS]: [slow(0)] });
    const before = await runIds();
    const key = { 'idempotency-key': 'ticket-4712' };
    const [a, b] = await Promise.all([postRun<{ id: string }>(TRIAGE, key), postRun<{ id: string }>(TRIAGE, key)]);
    expect(a.body.id).toBeDefined();
    expect(b.body.id).toBe(a.body.id);
    expect((await runIds()).filter((id) => !before.includes(id))).toEqual([a.body.id]);
    expect(await postRun({ flow: 'triage', input: { ticket: 'other' } }, key)).toMatchObject({ status: 422, body: { code: 'E_IDEMPOTENCY_KEY_REUSED' } });
  }, 60_000);
});
