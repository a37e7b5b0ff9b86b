// A policy saved in the dashboard is used by the next run a worker starts (DESIGN: Storage, "The
// project in the database", "Workers and the queue"): the policy form's server action saves a new
// project snapshot; a running `aqven worker` process moves to it before its next run, which records
// the new snapshot and the new policy.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodePolicy } from '@/lib/engine/types';
import { startSimulator, type SimServer } from '@/lib/sim';
import { ensureCliBuilt } from '../cli/aqven-process';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { eventually, startWorker, type WorkerProcess } from './workers';
import { saveEnv } from '../helpers/saved-env';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL', 'AQVEN_SIM_URL']);
let t: TestDb;
let sim: SimServer;
let worker: WorkerProcess;

beforeAll(async () => {
  ensureCliBuilt();
  t = await openTestDb('pg');
  sim = await startSimulator({});
  const dir = copyShowcase();
  Object.assign(process.env, { AQVEN_PROJECT: dir, AQVEN_SIMULATE: '1', AQVEN_DATABASE_URL: t.target, AQVEN_SIM_URL: sim.url });
  // the dashboard's session pushes the folder as the first snapshot; the worker then runs that one
  await (await import('@/lib/server/session')).serverSession();
  worker = await startWorker({ url: t.target, simUrl: sim.url, project: dir, concurrency: 2 });
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  const { serverSession } = await import('@/lib/server/session');
  await (await serverSession()).close();
  await sim?.close();
  await t?.close();
  restoreEnv();
});

/** starts a run as the dashboard's POST /api/runs does (queued in PostgreSQL mode) and waits for the worker to finish it */
async function runThroughWorker(): Promise<{ snapshotId: number | null; classifierPolicy: NodePolicy }> {
  const { startRun } = await import('@/lib/server/session');
  const res = await startRun('triage', { ticket: 'The invoice total is wrong' });
  if (!res.ok) throw new Error(res.error);
  const { runs, nodeRuns } = t.db.t;
  const run = await eventually('the worker to finish the run', async () => {
    const [r] = await t.db.q.select().from(runs).where(eq(runs.id, res.id));
    return r && r.status !== 'queued' && r.status !== 'running' ? r : null;
  });
  const nodes = await t.db.q.select().from(nodeRuns).where(eq(nodeRuns.runId, res.id));
  const classify = nodes.find((n) => n.nodeId === 'classify')!;
  return { snapshotId: run.snapshotId, classifierPolicy: classify.policy as NodePolicy };
}

describe('a policy saved in the dashboard', () => {
  it('is used by the next run a worker starts', async () => {
    const first = await runThroughWorker();
    expect(first.snapshotId).toBe(1);

    // the classifier's policy form, saved with other retries and an on_error of fallback
    const { readAgentFile } = await import('@/lib/server/agent-file');
    const { serverSession } = await import('@/lib/server/session');
    const base = (await readAgentFile((await serverSession()).project, 'classifier'))!.hash;
    const fd = new FormData();
    fd.set('agent', 'classifier');
    fd.set('model', 'openrouter:google/gemini-2.5-flash-lite');
    fd.set('retries', '4');
    fd.set('on_error', 'retry');
    fd.set('on_refusal', 'fail');
    fd.set('on_truncated', 'fail');
    fd.set('base', base);
    const { saveAgentPolicy } = await import('@/lib/actions/save-agent-policy');
    const saved = await saveAgentPolicy({ ok: false }, fd);
    expect(saved).toMatchObject({ ok: true });

    const second = await runThroughWorker();
    expect(second.snapshotId).toBe(2);
    expect(JSON.stringify(second.classifierPolicy)).not.toBe(JSON.stringify(first.classifierPolicy));
    expect(JSON.stringify(second.classifierPolicy)).toContain('"retries":4');
    expect(worker.err()).not.toMatch(/error/i);
    expect(worker.lines().filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
  });
});
