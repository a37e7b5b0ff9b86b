// A replay batch's progress through the database, on both dialects (DESIGN: The dashboard, "Replay
// with the current policy"): what the process running a batch records is read by another process
// (a second connection), throttled but never lost, a replay's end at once; a batch whose process
// stopped writing reads as stopped, its replays as the run store recorded them; a write that fails
// never stops the batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayBatch } from '@/db/replay-batch-queries';
import type { Db } from '@/db/types';
import type { BatchItemState, BatchProgress } from '@/lib/flow/replay-batch';
import { BATCH_STALE_MS, BATCH_WRITE_MS, BatchRecorder, recentBatches, storedBatchView, type BatchMeta } from '@/lib/flow/replay-batch-store';
import { DIALECTS, otherProcess, openTestDb, type TestDb } from '../helpers/dialects';

const T0 = Date.UTC(2030, 0, 2, 3, 4, 5);

/** a batch of `n` items, all waiting */
function fresh(n: number): BatchProgress {
  return {
    total: n,
    concurrency: 2,
    capUsd: 1,
    spentUsd: 0,
    counts: { waiting: n, running: 0, succeeded: 0, failed: 0, refused: 0, not_started: 0 },
    peakRunning: 0,
    done: false,
    stopped: null,
    items: Array.from({ length: n }, (_, i) => ({
      runId: `orig-${i}`,
      nodeId: 'draft',
      state: 'waiting' as const,
      replayRunId: null,
      reason: null,
      estimateUsd: 0.01,
      costUsd: 0,
    })),
  };
}

/** `p` with item `i` moved to `state` (its replay run named when it has one) */
function moved(p: BatchProgress, i: number, state: BatchItemState, replayRunId: string | null = p.items[i]!.replayRunId, costUsd = 0): BatchProgress {
  const items = p.items.map((it, j) => (j === i ? { ...it, state, replayRunId, costUsd } : { ...it }));
  const counts = { waiting: 0, running: 0, succeeded: 0, failed: 0, refused: 0, not_started: 0 };
  for (const it of items) counts[it.state]++;
  return { ...p, items, counts, spentUsd: items.reduce((s, it) => s + it.costUsd, 0), peakRunning: Math.max(p.peakRunning, counts.running) };
}

describe.each(DIALECTS)('a replay batch’s progress through the database on %s', (dialect) => {
  let t: TestDb;
  let other: { db: Db; close(): Promise<void> };
  let clock = T0;
  const now = () => clock;
  let n = 0;
  const meta = (): BatchMeta => ({ id: `batch-${dialect}-${++n}`, label: 'sig-a', startedBy: 'ana', startedAt: clock });

  beforeAll(async () => {
    t = await openTestDb(dialect);
    other = otherProcess(t);
  }, 90_000);
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  it('another process reads the progress as it goes, throttled, each replay’s end at once, and the end', async () => {
    const m = meta();
    let p = fresh(3);
    const rec = new BatchRecorder(t.db, m, p, { now, owner: 'proc-1' });
    await rec.start();
    // the id is answered only now: the other process finds the batch at once
    expect(await storedBatchView(other.db, m.id, clock)).toMatchObject({
      id: m.id,
      label: 'sig-a',
      startedBy: 'ana',
      startedAt: T0,
      total: 3,
      done: false,
      counts: { waiting: 3 },
    });

    // many changes within BATCH_WRITE_MS: not one write each
    p = moved(p, 0, 'running', 'replay-0');
    for (let i = 0; i < 50; i++) rec.progress({ ...p, spentUsd: i / 1000 });
    await new Promise((r) => setTimeout(r, 20));
    expect(rec.writes).toBe(1);
    expect((await storedBatchView(other.db, m.id, clock))!.counts.running).toBe(0);
    // the interval passed: the latest progress is written (a trailing write; never lost)
    clock += BATCH_WRITE_MS;
    await new Promise((r) => setTimeout(r, BATCH_WRITE_MS + 100));
    expect(rec.writes).toBe(2);
    expect(await storedBatchView(other.db, m.id, clock)).toMatchObject({ counts: { running: 1 }, spentUsd: 0.049, items: [{ state: 'running', replayRunId: 'replay-0' }, {}, {}] });

    // a replay's end is written at once, the interval not passed
    p = moved(p, 0, 'succeeded', 'replay-0', 0.02);
    rec.progress(p);
    await new Promise((r) => setTimeout(r, 50));
    expect(rec.writes).toBe(3);
    expect(await storedBatchView(other.db, m.id, clock)).toMatchObject({ counts: { succeeded: 1 }, spentUsd: 0.02 });

    p = moved(moved(p, 1, 'failed', 'replay-1', 0.01), 2, 'refused');
    clock += 1000;
    await rec.finish({ ...p, done: true, stopped: null });
    const row = await replayBatch(other.db, m.id);
    expect(row).toMatchObject({ finishedAt: clock, succeeded: 1, total: 3, stopped: null });
    // long after: a finished batch is never read as lost
    const later = await storedBatchView(other.db, m.id, clock + 10 * BATCH_STALE_MS);
    expect(later).toMatchObject({ done: true, stopped: null, counts: { succeeded: 1, failed: 1, refused: 1 } });
    rec.progress(moved(p, 0, 'failed'));
    await new Promise((r) => setTimeout(r, 20));
    expect((await replayBatch(other.db, m.id))!.succeeded).toBe(1);
  });

  it('a batch whose process stopped writing reads as stopped, its replays as the run store recorded them', async () => {
    await t.db.q.insert(t.db.t.runs).values([
      { id: 'replay-ok', project: 'p', flow: 'triage', status: 'succeeded', startedAt: T0, kind: 'replay', costUsd: 0.25 },
      { id: 'replay-cut', project: 'p', flow: 'triage', status: 'interrupted', startedAt: T0, kind: 'replay', errorMessage: 'the process running the run stopped' },
    ]);
    const m = meta();
    let p = fresh(5);
    const rec = new BatchRecorder(t.db, m, p, { now, owner: 'proc-dead' });
    await rec.start();
    p = moved(p, 0, 'succeeded', 'replay-done-before');
    p = moved(p, 1, 'running', 'replay-ok'); // it ended after the last write
    p = moved(p, 2, 'running', 'replay-cut');
    p = moved(p, 3, 'running'); // still being planned: no run yet
    rec.progress(p);
    await new Promise((r) => setTimeout(r, 50));
    const lastWrite = clock;
    // the process dies here: no more writes, no finish (its timers die with it)
    (rec as unknown as { stopTimers(): void }).stopTimers();

    // within the stale bound the batch still reads as running
    expect(await storedBatchView(other.db, m.id, lastWrite + BATCH_STALE_MS)).toMatchObject({ done: false, stopped: null, counts: { running: 3 } });
    const lost = await storedBatchView(other.db, m.id, lastWrite + BATCH_STALE_MS + 1);
    expect(lost).toMatchObject({
      done: true,
      stopped: 'the server process running this batch stopped; 1 of 5 replays had finished',
      counts: { waiting: 0, running: 0, succeeded: 2, failed: 1, not_started: 2 },
    });
    expect(lost!.items.map((it) => [it.state, it.reason])).toEqual([
      ['succeeded', null],
      ['succeeded', null],
      ['failed', 'the process running the run stopped'],
      ['not_started', lost!.stopped],
      ['not_started', lost!.stopped],
    ]);
    // what the replay taken over spent is counted, as its run recorded it
    expect(lost!.items[1]!.costUsd).toBe(0.25);
    expect(lost!.spentUsd).toBeGreaterThanOrEqual(0.25);
    // the list says what the batch's page says: the replays that now succeed, taken over ones included
    const [listed] = (await recentBatches(other.db, lastWrite + BATCH_STALE_MS + 1, { limit: 5 })).filter((b) => b.id === m.id);
    expect(listed).toMatchObject({ state: 'lost', succeeded: 2, finished: 3, total: 5, spentUsd: lost!.spentUsd, stopped: lost!.stopped });
    expect((await recentBatches(other.db, lastWrite, { limit: 5 })).find((b) => b.id === m.id)).toMatchObject({ state: 'running', stopped: null });
  });

  it('a write that fails is reported once and never stops the batch', async () => {
    const broken = otherProcess(t);
    await broken.close();
    const errors: unknown[] = [];
    const m = meta();
    let p = fresh(2);
    const rec = new BatchRecorder(broken.db, m, p, { now, owner: 'proc-3', onWriteError: (e) => errors.push(e) });
    await rec.start();
    p = moved(p, 0, 'succeeded', 'r');
    rec.progress(p);
    p = moved(p, 1, 'failed', 'r2');
    rec.progress(p);
    await rec.finish({ ...p, done: true });
    expect(errors).toHaveLength(1);
    expect(await storedBatchView(other.db, m.id, clock)).toBeNull();
  });
});
