// Every run records who started it and the project it ran under (DESIGN: Storage, The run record),
// on both dialects: `runs.started_by` and `runs.project_hash` are written with the run's first row
// (in-process, or queued), come back in its facts and its run record, and a take-over keeps them.
// A run input whose JSON is over AQVEN_MAX_INPUT_BYTES is refused before anything is stored.
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { leaseKeeper, LEASE_TTL_MS } from '@/db/run-lease';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import { takeOverRun } from '@/lib/flow/resume';
import { DEFAULT_MAX_INPUT_BYTES } from '@/lib/contracts/input-size';
import { beginRun, RunInputError, RunInterruptedError } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { routeToSimulator } from '@/lib/flow/simulate';
import { DIALECTS, otherProcess } from '../helpers/dialects';
import { GPT_OSS, worldOn, type World } from '../helpers/showcase';
import { until } from '../helpers/until';

const HASH = 'ab'.repeat(32);
let w: World<Db> | null = null;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  await w?.close();
  w = null;
});

const targetOf = (db: Db) => (db.dialect === 'pg' ? db.url : db.name);

async function rowOf(db: Db, id: string) {
  const { runs } = db.t;
  const [row] = await db.q.select({ startedBy: runs.startedBy, projectHash: runs.projectHash, snapshotId: runs.snapshotId, status: runs.status }).from(runs).where(eq(runs.id, id));
  return row;
}

const countRows = async (db: Db) => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;

/** `{"ticket":"xxx…"}` whose JSON text is exactly `bytes` long */
const ticketOf = (bytes: number) => ({ ticket: 'x'.repeat(bytes - JSON.stringify({ ticket: '' }).length) });

describe.each(DIALECTS)('who started a run and its project, on %s', (dialect) => {
  it('are written with the run, read back with its facts, and are part of its record', async () => {
    w = await worldOn(dialect, { '*': [{ kind: 'ok' }] });
    const live = await w.run('triage', { ticket: 'I was charged twice' }, { projectHash: HASH, startedBy: 'cli:ana', snapshotId: dialect === 'pg' ? 7 : null });
    expect(live).toMatchObject({ startedBy: 'cli:ana', projectHash: HASH, snapshotId: dialect === 'pg' ? 7 : null });
    expect(await rowOf(w.db, live.id)).toMatchObject({ startedBy: 'cli:ana', projectHash: HASH });
    expect(await getRunFacts(w.db, live.id)).toMatchObject({ startedBy: 'cli:ana', projectHash: HASH });
    expect(await getRunRecord(w.db, live.id)).toEqual(live);

    // a caller that knows neither (the dashboard without accounts, an older caller) records nulls
    const anonymous = await w.run('triage', { ticket: 'Hello' });
    expect(anonymous).toMatchObject({ startedBy: null, projectHash: null, snapshotId: null });
    expect(await rowOf(w.db, anonymous.id)).toMatchObject({ startedBy: null, projectHash: null, snapshotId: null });
  });

  it('a run taken over keeps who started it and the project it was recorded under', async () => {
    w = await worldOn(dialect, { [GPT_OSS]: [{ kind: 'ok' }, { kind: 'stall' }, { kind: 'ok' }] });
    const { project, sim, db } = w;
    const { providers, env } = routeToSimulator(project, sim);
    // a worker (its own connection) starts the run, then dies after the second request
    const dying = otherProcess({ db, target: targetOf(db), close: async () => undefined });
    const ac = new AbortController();
    const first = await beginRun({
      project,
      flow: 'long-answer',
      input: { question: 'Why?' },
      providers,
      env,
      db: dying.db,
      signal: ac.signal,
      projectHash: HASH,
      startedBy: 'token:ci',
    });
    const ended = first.done.catch(() => null);
    cleanups.push(async () => {
      ac.abort(new RunInterruptedError('killed'));
      await ended;
      await dying.close();
    });
    await until('two requests at the simulator', () => sim.requests().length === 2);
    await runStore(dying.db).flush();
    leaseKeeper(dying.db).drop(first.runId);

    const started = (await takeOverRun({ db, runId: first.runId, fence: 1, project, providers, env, now: Date.now() + LEASE_TTL_MS + 1, owner: 'worker-2' }))!;
    const record = await started.done;
    expect(record).toMatchObject({ status: 'succeeded', startedBy: 'token:ci', projectHash: HASH });
    expect(await rowOf(db, first.runId)).toMatchObject({ status: 'succeeded', startedBy: 'token:ci', projectHash: HASH });
  });

  it('refuses an input whose JSON is just over the bound, naming the size and the limit; nothing is stored', async () => {
    w = await worldOn(dialect, { '*': [{ kind: 'ok' }] });
    const over = ticketOf(DEFAULT_MAX_INPUT_BYTES + 1);
    expect(Buffer.byteLength(JSON.stringify(over))).toBe(DEFAULT_MAX_INPUT_BYTES + 1);
    const err = (await w.run('triage', over).catch((e: unknown) => e)) as RunInputError;
    expect(err).toBeInstanceOf(RunInputError);
    expect(err.field).toBe('input');
    expect(err.message).toBe('input is 262,145 bytes as JSON; a run input may be at most 262,144 bytes (256 KiB, AQVEN_MAX_INPUT_BYTES) — nothing was stored');
    expect(w.sim.requests()).toHaveLength(0);
    expect(await countRows(w.db)).toBe(0);

    // at the bound: run and stored whole
    const at = await w.run('triage', ticketOf(DEFAULT_MAX_INPUT_BYTES));
    expect(((await getRunFacts(w.db, at.id))!.input as { ticket: string }).ticket).toHaveLength(DEFAULT_MAX_INPUT_BYTES - JSON.stringify({ ticket: '' }).length);
  });
});

describe('a queued run (PostgreSQL mode)', () => {
  it('records who queued it and the project hash; an input over the bound is neither stored nor queued', async () => {
    w = await worldOn('pg', {});
    const db = w.db;
    if (db.dialect !== 'pg') throw new Error('pg');
    const { enqueueRun } = await import('@/lib/flow/enqueue');
    const id = await enqueueRun({ db, project: w.project, snapshotId: 3, projectHash: HASH, startedBy: 'alice', flow: 'triage', input: { ticket: 'Hi' } });
    expect(await rowOf(db, id)).toEqual({ status: 'queued', startedBy: 'alice', projectHash: HASH, snapshotId: 3 });
    expect(await getRunRecord(db, id)).toMatchObject({ status: 'queued', startedBy: 'alice', projectHash: HASH, snapshotId: 3 });

    await expect(
      enqueueRun({ db, project: w.project, snapshotId: 3, projectHash: HASH, startedBy: 'alice', flow: 'triage', input: ticketOf(DEFAULT_MAX_INPUT_BYTES + 1) }),
    ).rejects.toThrow(/^input is 262,145 bytes as JSON; a run input may be at most 262,144 bytes/);
    expect(await countRows(db)).toBe(1);
    const jobs = await db.pool.query('select count(*)::int as n from graphile_worker._private_jobs');
    expect(jobs.rows[0].n).toBe(1);
  });
});
