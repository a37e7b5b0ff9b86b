// Replay batches as stored (DESIGN: The dashboard, "Replay with the current policy"): the process
// running a bulk replay inserts its row, writes its progress (throttled by the caller) and finishes
// it; any process reads one or lists the recent ones. The progress is kept as the JSON the batch
// made (lib/flow/replay.ts BatchProgress): db/ stores it without knowing its shape, lib/flow reads it.
import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from './types';

/** The figures of a batch kept in their own columns, for the list of recent batches. */
export interface ReplayBatchFigures {
  total: number;
  succeeded: number;
  spentUsd: number;
  capUsd: number | null;
  stopped: string | null;
  /** the whole progress (BatchProgress) */
  progress: unknown;
}

export interface NewReplayBatch extends ReplayBatchFigures {
  id: string;
  label: string;
  startedBy: string | null;
  startedAt: number;
  /** the process running it (PROCESS_OWNER) */
  owner: string;
}

/** A batch as stored; `progress` is the JSON the owner last wrote. */
export interface StoredReplayBatch extends NewReplayBatch {
  updatedAt: number;
  finishedAt: number | null;
}

/** Inserts a batch as it starts, written at `now`. */
export async function insertReplayBatch(db: Db, b: NewReplayBatch, now: number): Promise<void> {
  await db.q.insert(db.t.replayBatches).values({ ...b, updatedAt: now });
}

/**
 * Writes the batch's progress at `now` (finished when `finished`); only its owner writes and a
 * finished batch is never written again. False when no row was written.
 */
export async function saveReplayBatch(db: Db, id: string, owner: string, f: ReplayBatchFigures, now: number, finished = false): Promise<boolean> {
  const rb = db.t.replayBatches;
  const done = await db.q
    .update(rb)
    .set({
      total: f.total,
      succeeded: f.succeeded,
      spentUsd: f.spentUsd,
      capUsd: f.capUsd,
      stopped: f.stopped,
      progress: f.progress,
      updatedAt: now,
      ...(finished ? { finishedAt: now } : {}),
    })
    .where(and(eq(rb.id, id), eq(rb.owner, owner), isNull(rb.finishedAt)))
    .returning({ id: rb.id });
  return done.length === 1;
}

/** One batch, or null for an id never stored (or purged). */
export async function replayBatch(db: Db, id: string): Promise<StoredReplayBatch | null> {
  const rb = db.t.replayBatches;
  const [row] = await db.q.select().from(rb).where(eq(rb.id, id));
  return row ?? null;
}

/** The newest batches first, of one label (a failure group) when given. */
export async function recentReplayBatches(db: Db, o: { limit: number; label?: string }): Promise<StoredReplayBatch[]> {
  const rb = db.t.replayBatches;
  return db.q
    .select()
    .from(rb)
    .where(o.label === undefined ? undefined : eq(rb.label, o.label))
    .orderBy(desc(rb.startedAt), desc(rb.id))
    .limit(o.limit);
}

/** The status and error of these runs as the run store recorded them (a batch's replays). */
export async function runOutcomes(db: Db, ids: string[]): Promise<Map<string, { status: string; error: string | null; costUsd: number }>> {
  if (ids.length === 0) return new Map();
  const r = db.t.runs;
  const rows = await db.q.select({ id: r.id, status: r.status, error: r.errorMessage, costUsd: r.costUsd }).from(r).where(inArray(r.id, ids));
  return new Map(rows.map((x) => [x.id, { status: x.status, error: x.error, costUsd: Number(x.costUsd) }]));
}
