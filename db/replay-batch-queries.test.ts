// Replay batches as stored, on both dialects: a batch goes in as it starts, only its owner writes
// its progress, a finished batch is never written again, the newest are listed first (of one
// failure group when asked), and retention deletes the old ones but not one still being written.
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { purgeRuns } from './purge';
import { insertReplayBatch, recentReplayBatches, replayBatch, runOutcomes, saveReplayBatch, type NewReplayBatch } from './replay-batch-queries';
import type { Db } from './types';

const T0 = Date.UTC(2030, 0, 2, 3, 4, 5); // past 2^31 ms: bigint read as a number on PostgreSQL
const progress = (succeeded: number) => ({ total: 3, counts: { succeeded }, items: [{ runId: 'r1', nodeId: 'draft', state: 'succeeded', replayRunId: 'x' }] });
const batch = (id: string, over: Partial<NewReplayBatch> = {}): NewReplayBatch => ({
  id,
  label: 'sig-a',
  startedBy: 'ana',
  startedAt: T0,
  owner: 'proc-1',
  total: 3,
  succeeded: 0,
  spentUsd: 0,
  capUsd: 0.5,
  stopped: null,
  progress: progress(0),
  ...over,
});

describe.each(DIALECTS)('replay batches on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.replayBatches);
  });

  it('a batch goes in running, takes its owner’s progress, and once finished is written no more', async () => {
    await insertReplayBatch(db, batch('b1'), T0 + 5);
    expect(await replayBatch(db, 'b1')).toMatchObject({
      label: 'sig-a',
      startedBy: 'ana',
      startedAt: T0,
      updatedAt: T0 + 5,
      finishedAt: null,
      total: 3,
      capUsd: 0.5,
      progress: progress(0),
    });
    expect(await replayBatch(db, 'nope')).toBeNull();

    const figures = { total: 3, succeeded: 2, spentUsd: 0.0123, capUsd: 0.5, stopped: null, progress: progress(2) };
    // another process's write is refused: only the owner writes
    expect(await saveReplayBatch(db, 'b1', 'proc-2', figures, T0 + 10)).toBe(false);
    expect(await saveReplayBatch(db, 'b1', 'proc-1', figures, T0 + 10)).toBe(true);
    expect(await replayBatch(db, 'b1')).toMatchObject({ succeeded: 2, spentUsd: 0.0123, updatedAt: T0 + 10, finishedAt: null, progress: progress(2) });

    expect(await saveReplayBatch(db, 'b1', 'proc-1', { ...figures, succeeded: 3, stopped: 'cap reached', progress: progress(3) }, T0 + 20, true)).toBe(true);
    expect(await saveReplayBatch(db, 'b1', 'proc-1', { ...figures, succeeded: 0, progress: progress(0) }, T0 + 30)).toBe(false);
    const done = await replayBatch(db, 'b1');
    expect(done).toMatchObject({ succeeded: 3, stopped: 'cap reached', updatedAt: T0 + 20, finishedAt: T0 + 20, progress: progress(3) });
    expect(typeof done!.finishedAt).toBe('number');
  });

  it('lists the newest batches first, of one failure group when asked', async () => {
    await insertReplayBatch(db, batch('b1', { startedAt: T0 }), T0);
    await insertReplayBatch(db, batch('b2', { startedAt: T0 + 1000, label: 'sig-b' }), T0 + 1000);
    await insertReplayBatch(db, batch('b3', { startedAt: T0 + 2000 }), T0 + 2000);
    expect((await recentReplayBatches(db, { limit: 10 })).map((b) => b.id)).toEqual(['b3', 'b2', 'b1']);
    expect((await recentReplayBatches(db, { limit: 2 })).map((b) => b.id)).toEqual(['b3', 'b2']);
    expect((await recentReplayBatches(db, { limit: 10, label: 'sig-a' })).map((b) => b.id)).toEqual(['b3', 'b1']);
    expect(await recentReplayBatches(db, { limit: 10, label: 'sig-z' })).toEqual([]);
  });

  it('reads the outcome of a batch’s replay runs', async () => {
    await db.q.insert(db.t.runs).values([
      { id: 'rr1', project: 'p', flow: 'triage', status: 'interrupted', startedAt: T0, kind: 'replay', errorMessage: 'the process stopped' },
      { id: 'rr2', project: 'p', flow: 'triage', status: 'succeeded', startedAt: T0, kind: 'replay', costUsd: 0.125 },
    ]);
    const got = await runOutcomes(db, ['rr1', 'rr2', 'rr3']);
    expect(Object.fromEntries(got)).toEqual({
      rr1: { status: 'interrupted', error: 'the process stopped', costUsd: 0 },
      rr2: { status: 'succeeded', error: null, costUsd: 0.125 },
    });
    expect((await runOutcomes(db, [])).size).toBe(0);
    await db.q.delete(db.t.runs);
  });

  it('retention deletes the batches started before the cutoff, not one still being written nor a newer one', async () => {
    const cutoff = T0 + 10_000;
    await insertReplayBatch(db, batch('old'), T0 + 50);
    await insertReplayBatch(db, batch('old-still-written'), T0);
    await saveReplayBatch(db, 'old-still-written', 'proc-1', { total: 3, succeeded: 0, spentUsd: 0, capUsd: null, stopped: null, progress: progress(0) }, cutoff + 1);
    await insertReplayBatch(db, batch('new', { startedAt: cutoff + 5 }), cutoff + 5);

    const dry = await purgeRuns(db, { cutoff, dryRun: true });
    expect(dry.deleted.replayBatches).toBe(1);
    expect((await recentReplayBatches(db, { limit: 10 })).map((b) => b.id).sort()).toEqual(['new', 'old', 'old-still-written']);
    const res = await purgeRuns(db, { cutoff });
    expect(res.deleted.replayBatches).toBe(1);
    expect((await recentReplayBatches(db, { limit: 10 })).map((b) => b.id).sort()).toEqual(['new', 'old-still-written']);
  });
});
