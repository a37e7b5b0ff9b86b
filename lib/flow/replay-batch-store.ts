// A replay batch's progress in the database (DESIGN: The dashboard, "Replay with the current
// policy", "Where a batch's progress lives"): the process running the batch writes its row through
// a BatchRecorder — at the start, at most every BATCH_WRITE_MS while it changes and at once when a
// replay ends, every BATCH_HEARTBEAT_MS regardless, and at the end — so any dashboard process can
// read it (storedBatchView). A batch not finished whose last write is older than BATCH_STALE_MS lost
// the process running it: it reads as stopped, its replays as the run store recorded them.
import { insertReplayBatch, recentReplayBatches, replayBatch, runOutcomes, saveReplayBatch, type StoredReplayBatch } from '@/db/replay-batch-queries';
import { PROCESS_OWNER } from '@/db/run-lease';
import type { Db } from '@/db/types';
import type { BatchItemProgress, BatchItemState, BatchProgress } from './replay-batch';

/** the shortest gap between two progress writes of one batch (a replay's end is written at once) */
export const BATCH_WRITE_MS = 500;
/** the owner writes the row at least this often while the batch runs, changed or not */
export const BATCH_HEARTBEAT_MS = 5_000;
/** three heartbeats missed, and a margin for a slow database: the process running the batch is gone */
export const BATCH_STALE_MS = 3 * BATCH_HEARTBEAT_MS + 5_000;

/** What names a batch beside its progress. */
export interface BatchMeta {
  id: string;
  /** what the batch replays, e.g. the failure group's signature */
  label: string;
  startedBy: string | null;
  startedAt: number;
}

/** A batch as the progress route answers it (lib/dashboard/replay-types.ts BatchResponse). */
export type BatchView = BatchMeta & BatchProgress;

const FINISHED: readonly BatchItemState[] = ['succeeded', 'failed', 'refused'];
const finishedCount = (p: BatchProgress) => FINISHED.reduce((n, s) => n + p.counts[s], 0);

const figures = (p: BatchProgress) => ({ total: p.total, succeeded: p.counts.succeeded, spentUsd: p.spentUsd, capUsd: p.capUsd, stopped: p.stopped, progress: p });

export interface BatchRecorderOptions {
  now?: () => number;
  owner?: string;
  /** hears the first failed write (the batch goes on regardless) */
  onWriteError?: (err: unknown) => void;
}

/**
 * Writes one batch's progress for the process running it. Writes never overlap and never stop the
 * batch: a failed one is reported once (onWriteError) and the next write tries again.
 */
export class BatchRecorder {
  /** rows written so far (the insert included) */
  writes = 0;
  private readonly now: () => number;
  private readonly owner: string;
  private latest: BatchProgress;
  private stored = false;
  private lastWrite = -Infinity;
  private lastFinished = 0;
  private queued = false;
  private closed = false;
  private failed = false;
  private chain: Promise<void> = Promise.resolve();
  private trailing: ReturnType<typeof setTimeout> | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly db: Db,
    private readonly meta: BatchMeta,
    first: BatchProgress,
    private readonly o: BatchRecorderOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.owner = o.owner ?? PROCESS_OWNER;
    this.latest = first;
  }

  /** Inserts the row (awaited: another process may read the batch once its id is answered) and starts the heartbeat. */
  async start(): Promise<void> {
    this.lastWrite = this.now();
    this.queued = true;
    this.chain = this.write(false);
    await this.chain;
    if (this.closed) return;
    this.heartbeat = setInterval(() => this.flush(), BATCH_HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  /** The batch's progress changed: written now when a replay ended or BATCH_WRITE_MS have passed, else at the end of that interval. */
  progress(p: BatchProgress): void {
    if (this.closed) return;
    this.latest = p;
    const ended = finishedCount(p) > this.lastFinished;
    const due = this.lastWrite + BATCH_WRITE_MS;
    if (ended || this.now() >= due) return this.flush();
    this.trailing ??= setTimeout(() => this.flush(), Math.max(0, due - this.now()));
  }

  /** The batch ended (`p.done`, or cut short): the last write, with finished_at. */
  async finish(p: BatchProgress): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.latest = p;
    this.stopTimers();
    this.chain = this.chain.then(() => this.write(true));
    await this.chain;
  }

  private flush(): void {
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = null;
    if (this.closed) return;
    this.lastWrite = this.now();
    // one write waiting is enough: it takes the progress as it is when it starts
    if (this.queued) return;
    this.queued = true;
    this.chain = this.chain.then(() => this.write(false));
  }

  private stopTimers(): void {
    if (this.trailing) clearTimeout(this.trailing);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.trailing = this.heartbeat = null;
  }

  private async write(finished: boolean): Promise<void> {
    this.queued = false;
    const p = this.latest;
    const now = this.now();
    try {
      // the insert carries the progress of now: a second write is needed only to finish the row
      let inserted = false;
      if (!this.stored) {
        await insertReplayBatch(this.db, { ...this.meta, owner: this.owner, ...figures(p) }, now);
        this.stored = inserted = true;
        this.writes++;
      }
      if (!inserted || finished) {
        await saveReplayBatch(this.db, this.meta.id, this.owner, figures(p), now, finished);
        this.writes++;
      }
      this.lastFinished = Math.max(this.lastFinished, finishedCount(p));
    } catch (err) {
      if (!this.failed) this.o.onWriteError?.(err);
      this.failed = true;
    }
  }
}

/** The batch's row is not finished and its owner stopped writing it: the process running it is gone. */
export const isLost = (b: Pick<StoredReplayBatch, 'finishedAt' | 'updatedAt'>, now: number): boolean => b.finishedAt === null && now - b.updatedAt > BATCH_STALE_MS;

/** Why a lost batch stopped, in the words the pages show. */
export function lostReason(p: Pick<BatchProgress, 'counts' | 'total'>): string {
  return `the server process running this batch stopped; ${finishedCount(p as BatchProgress)} of ${p.total} replays had finished`;
}

/** A lost batch as it ended: what had not started did not, a replay it had started is what its run recorded (a worker may have taken it over). */
async function asStopped(db: Db, view: BatchView): Promise<BatchView> {
  const why = lostReason(view);
  const outcomes = await runOutcomes(
    db,
    view.items.flatMap((it) => (it.state === 'running' && it.replayRunId ? [it.replayRunId] : [])),
  );
  const items = view.items.map((it): BatchItemProgress => {
    if (it.state === 'waiting') return { ...it, state: 'not_started', reason: why };
    if (it.state !== 'running') return it;
    const run = it.replayRunId ? outcomes.get(it.replayRunId) : undefined;
    if (!run) return { ...it, state: 'not_started', reason: why };
    // what the run spent, as recorded (the batch's row stopped counting when its process died)
    const spent = { costUsd: Math.max(it.costUsd, run.costUsd) };
    if (run.status === 'succeeded') return { ...it, ...spent, state: 'succeeded', reason: null };
    if (run.status === 'running' || run.status === 'queued') return { ...it, ...spent };
    return { ...it, ...spent, state: 'failed', reason: run.error ?? `the replay run ended ${run.status}` };
  });
  const counts: Record<BatchItemState, number> = { waiting: 0, running: 0, succeeded: 0, failed: 0, refused: 0, not_started: 0 };
  for (const it of items) counts[it.state]++;
  const spentUsd = Math.max(
    view.spentUsd,
    items.reduce((sum, it) => sum + it.costUsd, 0),
  );
  return { ...view, items, counts, spentUsd, done: true, stopped: view.stopped ? `${why} (before that: ${view.stopped})` : why };
}

/** A batch as stored, read by any process at `now`; null for an id never stored. A lost batch reads as stopped. */
export async function storedBatchView(db: Db, id: string, now: number): Promise<BatchView | null> {
  const row = await replayBatch(db, id);
  if (!row) return null;
  const view: BatchView = { ...(row.progress as BatchProgress), id: row.id, label: row.label, startedBy: row.startedBy, startedAt: row.startedAt };
  if (row.finishedAt !== null) return { ...view, done: true };
  return isLost(row, now) ? asStopped(db, view) : view;
}

/** A batch in the list of recent ones. */
export interface BatchSummary {
  id: string;
  label: string;
  startedBy: string | null;
  startedAt: number;
  /** when it finished, or its last write while it ran */
  lastAt: number;
  state: 'running' | 'finished' | 'lost';
  total: number;
  succeeded: number;
  /** replays that ended (succeeded, still failed, could not be replayed) */
  finished: number;
  spentUsd: number;
  capUsd: number | null;
  stopped: string | null;
}

/** The newest batches (of one failure group when `label` is given), as any process sees them at `now`. */
export async function recentBatches(db: Db, now: number, o: { limit: number; label?: string }): Promise<BatchSummary[]> {
  const rows = await recentReplayBatches(db, o);
  return Promise.all(
    rows.map(async (r) => {
      const lost = isLost(r, now);
      // a lost batch as its progress route shows it: its started replays as their runs recorded them
      const p = lost
        ? await asStopped(db, { ...(r.progress as BatchProgress), id: r.id, label: r.label, startedBy: r.startedBy, startedAt: r.startedAt })
        : (r.progress as BatchProgress);
      return {
        id: r.id,
        label: r.label,
        startedBy: r.startedBy,
        startedAt: r.startedAt,
        lastAt: r.finishedAt ?? r.updatedAt,
        state: lost ? 'lost' : r.finishedAt === null ? 'running' : 'finished',
        total: r.total,
        succeeded: lost ? p.counts.succeeded : r.succeeded,
        finished: finishedCount(p),
        spentUsd: lost ? p.spentUsd : r.spentUsd,
        capUsd: r.capUsd,
        stopped: lost ? lostReason(r.progress as BatchProgress) : r.stopped,
      };
    }),
  );
}
