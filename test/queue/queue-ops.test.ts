// Runs as jobs (DESIGN: Storage, "Workers and the queue") on a real PostgreSQL: a run is queued with
// its job in one transaction, only when its flow and input are valid; a claim is a compare-and-set
// that one of two racing workers wins; a queued run is cancelled with its job, anything else is
// left alone; a queued run whose job a dead worker holds gets a new job.
import { and, eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDatabase } from '@/db/client';
import { LEASE_TTL_MS } from '@/db/run-lease';
import type { Db, PgDb } from '@/db/types';
import { RunInputError, UnknownFlowError } from '@/lib/flow/run-flow';
import { loadProject, type Project } from '@/lib/project';
import { cancelQueuedRun } from '@/lib/flow/cancel-queued';
import { claimRun } from '@/lib/queue/claim';
import { enqueueRun } from '@/lib/flow/enqueue';
import { ensureQueueSchema, redeliverStuckRuns, STUCK_JOB_MS } from '@/db/queue-jobs';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { copyShowcase } from '../helpers/showcase';

interface JobRow {
  id: string;
  key: string | null;
  task_identifier: string;
  payload: { runId?: string };
  locked_at: Date | null;
  attempts: number;
  max_attempts: number;
}

describe('runs as jobs on PostgreSQL', () => {
  let tdb: TestDatabase;
  let db: PgDb;
  /** a second pool: another worker process */
  let other: pg.Pool;
  let project: Project;
  const TICKET = { ticket: 'My invoice is wrong' };

  beforeAll(async () => {
    tdb = await testDatabase({ migrated: true });
    const opened = await openDatabase(tdb.url);
    if (opened.dialect !== 'pg') throw new Error('expected PostgreSQL');
    db = opened;
    other = new pg.Pool({ connectionString: tdb.url, max: 4 });
    const loaded = await loadProject(copyShowcase(), { env: {} });
    project = loaded.project!;
    await ensureQueueSchema(db);
  }, 90_000);
  afterAll(async () => {
    await other?.end();
    await closeDb(tdb.url);
    await tdb?.stop();
  });

  const jobs = async (key?: string) =>
    (
      await db.pool.query<JobRow>(
        `select j.id, j.key, t.identifier as task_identifier, j.payload, j.locked_at, j.attempts, j.max_attempts
           from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
          ${key ? 'where j.key = $1' : ''} order by j.id`,
        key ? [key] : [],
      )
    ).rows;
  const row = async (id: string) => (await db.q.select().from(db.t.runs).where(eq(db.t.runs.id, id)))[0];
  const enqueue = (flow: string, input: unknown) => enqueueRun({ db, project, snapshotId: null, flow, input });

  it('refuses an unknown flow and a bad input before anything is queued', async () => {
    await expect(enqueue('nope', TICKET)).rejects.toThrow(UnknownFlowError);
    const err = await enqueue('triage', { ticket: 7 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunInputError);
    expect((err as RunInputError).field).toBe('input.ticket');
    const missing = await enqueue('triage', {}).catch((e: unknown) => e);
    expect((missing as RunInputError).field).toBe('input.ticket');
    expect(await db.q.select().from(db.t.runs)).toHaveLength(0);
    expect(await jobs()).toHaveLength(0);
  });

  it('commits the queued run and its job together', async () => {
    const before = Date.now();
    const id = await enqueue('triage', TICKET);
    const r = (await row(id))!;
    expect(r).toMatchObject({ status: 'queued', flow: 'triage', project: 'showcase', input: TICKET, fence: 0, owner: null, leaseExpiresAt: null, finishedAt: null });
    expect(r.queuedAt).toBeGreaterThanOrEqual(before);
    const [job] = await jobs(id);
    expect(job).toMatchObject({ key: id, task_identifier: 'aqven_run', payload: { runId: id }, locked_at: null, attempts: 0, max_attempts: 25 });
  });

  it('a run whose job cannot be added is not queued either (one transaction)', async () => {
    await db.pool.query('alter function graphile_worker.add_job rename to add_job_away');
    try {
      await expect(enqueue('triage', TICKET)).rejects.toThrow();
    } finally {
      await db.pool.query('alter function graphile_worker.add_job_away rename to add_job');
    }
    const queued = await db.q.select().from(db.t.runs).where(eq(db.t.runs.status, 'queued'));
    expect(queued).toHaveLength(1); // the one of the test before
  });

  it('two workers claiming one run: one wins, the other finds it held', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, () => enqueue('triage', TICKET)));
    // the second worker: its own pool and owner
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const otherDb = { ...db, pool: other, q: drizzle(other) as unknown as Db['q'] } as PgDb;
    for (const id of ids) {
      const [a, b] = await Promise.all([
        claimRun(db, id, { project, snapshotId: null, owner: 'worker-a' }),
        claimRun(otherDb, id, { project, snapshotId: null, owner: 'worker-b' }),
      ]);
      expect([a.kind, b.kind].sort()).toEqual(['claimed', 'held']);
      const won = a.kind === 'claimed' ? a : b;
      if (won.kind !== 'claimed') throw new Error('no claim won');
      expect(won).toMatchObject({ flow: 'triage', input: TICKET, lease: { runId: id, owner: won === a ? 'worker-a' : 'worker-b', fence: 1 } });
      const r = (await row(id))!;
      expect(r).toMatchObject({ status: 'running', owner: won.lease.owner, fence: 1, leaseExpiresAt: won.lease.expiresAt });
    }
  });

  it("a claim finds a dead owner's run expired, a finished run over, and refuses a run its project cannot run", async () => {
    const id = await enqueue('triage', TICKET);
    const claimed = await claimRun(db, id, { project, snapshotId: null, owner: 'dead' });
    expect(claimed.kind).toBe('claimed');
    const later = Date.now() + LEASE_TTL_MS + 1;
    expect(await claimRun(db, id, { project, snapshotId: null, now: later })).toEqual({ kind: 'expired', fence: 1 });
    await db.q.update(db.t.runs).set({ status: 'succeeded', finishedAt: Date.now() }).where(eq(db.t.runs.id, id));
    expect(await claimRun(db, id, { project, snapshotId: null })).toEqual({ kind: 'over', status: 'succeeded' });
    expect(await claimRun(db, 'no-such-run', { project, snapshotId: null })).toEqual({ kind: 'missing' });

    // a newer snapshot without the flow: the queued run fails, it does not stay queued for ever
    const gone = await enqueue('long-answer', { question: 'why?' });
    const without: Project = { ...project, flows: { triage: project.flows.triage! } };
    const refused = await claimRun(db, gone, { project: without, snapshotId: 42 });
    expect(refused).toMatchObject({ kind: 'refused', flow: 'long-answer', error: { code: 'unknown_flow' } });
    expect(await row(gone)).toMatchObject({ status: 'failed', errorCode: 'unknown_flow', snapshotId: 42 });
  });

  it('cancels a queued run and removes its job; a run no longer queued is left alone', async () => {
    const id = await enqueue('triage', TICKET);
    expect(await jobs(id)).toHaveLength(1);
    expect(await cancelQueuedRun(db, id)).toEqual({ cancelled: true });
    const r = (await row(id))!;
    expect(r.status).toBe('cancelled');
    expect(r.finishedAt).toBeGreaterThan(0);
    expect(await jobs(id)).toHaveLength(0);
    expect(await cancelQueuedRun(db, id)).toEqual({ cancelled: false, status: 'cancelled' });
    // a cancelled run is not claimed
    expect(await claimRun(db, id, { project, snapshotId: null })).toEqual({ kind: 'over', status: 'cancelled' });

    const running = await enqueue('triage', TICKET);
    await claimRun(db, running, { project, snapshotId: null });
    expect(await cancelQueuedRun(db, running)).toEqual({ cancelled: false, status: 'running' });
    expect((await row(running))!.status).toBe('running');
    expect(await cancelQueuedRun(db, 'no-such-run')).toEqual({ cancelled: false, status: null });
  });

  it('a queued run whose job a dead worker holds gets a new job; a waiting job keeps its place', async () => {
    await db.q.delete(db.t.runs).where(eq(db.t.runs.status, 'queued'));
    const stuck = await enqueue('triage', TICKET);
    const waiting = await enqueue('triage', TICKET);
    // a worker took the job and died before claiming the run: the job stays locked
    await db.pool.query(`update graphile_worker._private_jobs set locked_at = now() - interval '1 minute', locked_by = 'dead-worker' where key = $1`, [stuck]);
    const queuedLongAgo = Date.now() - STUCK_JOB_MS - 1000;
    await db.q
      .update(db.t.runs)
      .set({ queuedAt: queuedLongAgo })
      .where(and(eq(db.t.runs.status, 'queued')));
    const [waitingJob] = await jobs(waiting);

    expect(await redeliverStuckRuns(db)).toEqual([stuck]);
    const fresh = await jobs(stuck);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).toMatchObject({ key: stuck, locked_at: null, attempts: 0, payload: { runId: stuck } });
    expect((await jobs(waiting))[0]).toEqual(waitingJob);
    // the old locked job lost its key and its retries: when the dead worker's lock lapses it is not run again
    const old = (await db.pool.query<JobRow>(`select key, attempts, max_attempts from graphile_worker._private_jobs where locked_by = 'dead-worker'`)).rows;
    expect(old).toEqual([{ key: null, attempts: 25, max_attempts: 25 }]);
    // nothing stuck any more
    expect(await redeliverStuckRuns(db)).toEqual([]);
  });
});
