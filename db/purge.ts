// Retention (DESIGN: Storage, "Retention"): runs started before a cutoff are deleted with everything
// stored under them — nodes, attempts, transport tries, stream chunks, notes, search entries (the
// foreign keys cascade; SQLite's connection turns them on, db/client.ts) — in short batches, one
// transaction each, so a dashboard or a worker writing meanwhile waits at most one batch; then the
// daily sums of the days wholly before the cutoff, the replay batches started before it and the
// audit events recorded before it. The Idempotency-Keys created before the cutoff go first (every key
// of a purged run among them). A run still queued or running is never deleted.
import { and, asc, count, eq, gt, inArray, lt, lte, notInArray, or, sql } from 'drizzle-orm';
import { formatBytes } from '@/lib/project/limits';
import { purgeAudit } from './audit-queries';
import { purgeKeys } from './idempotency-queries';
import { DAY_MS } from './run-aggregates';
import { transaction } from './tx';
import { LIVE_RUN_STATUSES, type Db } from './types';

/** rows deleted (or, dry, that would be) per table */
export interface PurgeCounts {
  runs: number;
  nodeRuns: number;
  attempts: number;
  transportTries: number;
  streamChunks: number;
  notes: number;
  searchDocs: number;
  agentDaily: number;
  nodeDaily: number;
  failureDaily: number;
  /** bulk replays started before the cutoff and no longer written */
  replayBatches: number;
  /** audit trail events recorded before the cutoff (db/audit-queries.ts purgeAudit) */
  auditEvents: number;
  /** Idempotency-Keys created before the cutoff (db/idempotency-queries.ts purgeKeys): every key of a purged run among them */
  idempotencyKeys: number;
}

export interface StorageSize {
  /** SQLite: the database file's pages (page_count × page_size); PostgreSQL: pg_total_relation_size of the run tables */
  bytes: number;
  /** SQLite: pages inside the file that are free (freelist_count × page_size), reused by new rows; null on PostgreSQL */
  freeBytes: number | null;
}

export interface PurgeResult {
  cutoff: number;
  dryRun: boolean;
  deleted: PurgeCounts;
  /** runs older than the cutoff left alone because they are still queued or running */
  keptLive: number;
  before: StorageSize;
  after: StorageSize;
  /** SQLite's auto_vacuum: none (free pages stay in the file), full, incremental (given back by this purge) */
  autoVacuum: 'none' | 'full' | 'incremental' | null;
}

/**
 * runs per batch, each batch one transaction: measured on a 100,000-run SQLite history (9 nodes and
 * attempts, 10 search entries a run), 200 runs held the write lock about 0.36 s of CPU; 100 keep a
 * writer waiting (busy_timeout 5 s) well under that
 */
export const PURGE_BATCH = 100;

const TABLES = [
  'runs',
  'node_runs',
  'attempts',
  'transport_tries',
  'stream_chunks',
  'notes',
  'search_docs',
  'agent_daily',
  'node_daily',
  'failure_daily',
  'replay_batches',
  'audit_events',
  'idempotency_keys',
] as const;

const zero = (): PurgeCounts => ({
  runs: 0,
  nodeRuns: 0,
  attempts: 0,
  transportTries: 0,
  streamChunks: 0,
  notes: 0,
  searchDocs: 0,
  agentDaily: 0,
  nodeDaily: 0,
  failureDaily: 0,
  replayBatches: 0,
  auditEvents: 0,
  idempotencyKeys: 0,
});

/** The daily sums of a day are deleted once the whole day lies before the cutoff. */
export const lastWholeDayBefore = (cutoff: number): number => Math.floor(cutoff / DAY_MS) * DAY_MS - DAY_MS;

export async function storageSize(db: Db): Promise<StorageSize> {
  if (db.dialect === 'sqlite') {
    const c = db.$client;
    const n = (p: string) => Number(c.pragma(p, { simple: true }));
    const page = n('page_size');
    return { bytes: n('page_count') * page, freeBytes: n('freelist_count') * page };
  }
  const names = TABLES.map((t) => sql`pg_total_relation_size(${t}::regclass)`);
  const [row] = await db.q.select({ bytes: sql<number>`${sql.join(names, sql` + `)}`.mapWith(Number) }).from(sql`(values (0)) as one`);
  return { bytes: row?.bytes ?? 0, freeBytes: null };
}

function autoVacuumOf(db: Db): PurgeResult['autoVacuum'] {
  if (db.dialect !== 'sqlite') return null;
  const mode = Number(db.$client.pragma('auto_vacuum', { simple: true }));
  return mode === 1 ? 'full' : mode === 2 ? 'incremental' : 'none';
}

/** What lies under these runs, counted before they go (the cascade does not say what it deleted). */
async function countUnder(
  db: Db,
  ids: string[],
): Promise<Omit<PurgeCounts, 'runs' | 'agentDaily' | 'nodeDaily' | 'failureDaily' | 'replayBatches' | 'auditEvents' | 'idempotencyKeys'>> {
  const { attempts, nodeRuns, notes, searchDocs, streamChunks, transportTries } = db.t;
  const n = async (q: Promise<{ n: number }[]>) => Number((await q)[0]?.n ?? 0);
  // one after another: inside a PostgreSQL transaction they share one connection
  const nodeRunsN = await n(db.q.select({ n: count() }).from(nodeRuns).where(inArray(nodeRuns.runId, ids)));
  const attemptsN = await n(db.q.select({ n: count() }).from(attempts).where(inArray(attempts.runId, ids)));
  const triesN = await n(db.q.select({ n: count() }).from(transportTries).innerJoin(attempts, eq(attempts.id, transportTries.attemptId)).where(inArray(attempts.runId, ids)));
  const chunksN = await n(db.q.select({ n: count() }).from(streamChunks).innerJoin(attempts, eq(attempts.id, streamChunks.attemptId)).where(inArray(attempts.runId, ids)));
  const notesN = await n(db.q.select({ n: count() }).from(notes).where(inArray(notes.runId, ids)));
  const docsN = await n(db.q.select({ n: count() }).from(searchDocs).where(inArray(searchDocs.runId, ids)));
  return { nodeRuns: nodeRunsN, attempts: attemptsN, transportTries: triesN, streamChunks: chunksN, notes: notesN, searchDocs: docsN };
}

/**
 * Deletes the runs started before `cutoff` (ms) that are not queued or running, with everything
 * under them, `batch` runs per transaction (oldest first), then the daily sums of the days wholly
 * before the cutoff. `dryRun` counts the same rows and deletes nothing. `between` runs after each
 * batch (a pause that lets other writers in; the CLI's progress).
 */
export async function purgeRuns(db: Db, opts: { cutoff: number; dryRun?: boolean; batch?: number; between?: (soFar: PurgeCounts) => Promise<void> | void }): Promise<PurgeResult> {
  const { agentDaily, failureDaily, nodeDaily, runs } = db.t;
  const batch = Math.max(1, Math.min(opts.batch ?? PURGE_BATCH, 5000));
  const dryRun = opts.dryRun ?? false;
  const before = await storageSize(db);
  const deleted = zero();
  const old = and(lt(runs.startedAt, opts.cutoff), notInArray(runs.status, LIVE_RUN_STATUSES));
  const [live] = await db.q
    .select({ n: count() })
    .from(runs)
    .where(and(lt(runs.startedAt, opts.cutoff), inArray(runs.status, LIVE_RUN_STATUSES)));

  // a key is claimed before its run starts, so the keys of every run started before the cutoff go here
  // (and any left would go with its run: the foreign key cascades)
  deleted.idempotencyKeys = await purgeKeys(db, opts.cutoff, { dryRun });
  // oldest first through runs_started_at_idx; a dry run pages on (started_at, id), a real one deletes what it read
  let after: { startedAt: number; id: string } | null = null;
  for (;;) {
    const page = await db.q
      .select({ id: runs.id, startedAt: runs.startedAt })
      .from(runs)
      .where(and(old, after ? or(gt(runs.startedAt, after.startedAt), and(eq(runs.startedAt, after.startedAt), gt(runs.id, after.id))) : undefined))
      .orderBy(asc(runs.startedAt), asc(runs.id))
      .limit(batch);
    if (page.length === 0) break;
    const ids = page.map((r) => r.id);
    const under = dryRun
      ? await countUnder(db, ids)
      : await transaction(db, async (q) => {
          const counted = await countUnder({ ...db, q } as Db, ids);
          await q.delete(runs).where(and(inArray(runs.id, ids), notInArray(runs.status, LIVE_RUN_STATUSES)));
          return counted;
        });
    deleted.runs += ids.length;
    for (const k of Object.keys(under) as (keyof typeof under)[]) deleted[k] += under[k];
    if (dryRun) after = page[page.length - 1]!;
    await opts.between?.(deleted);
    // the event loop runs between batches: this process's own readers and writers get their turn
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (page.length < batch) break;
  }

  const lastDay = lastWholeDayBefore(opts.cutoff);
  const sums = [
    ['agentDaily', agentDaily, agentDaily.day],
    ['nodeDaily', nodeDaily, nodeDaily.day],
    ['failureDaily', failureDaily, failureDaily.day],
  ] as const;
  for (const [key, table, day] of sums) {
    if (dryRun) deleted[key] = Number((await db.q.select({ n: count() }).from(table).where(lte(day, lastDay)))[0]?.n ?? 0);
    else
      deleted[key] = (
        await db.q
          .delete(table)
          .where(lte(day, lastDay))
          .returning({ one: sql`1` })
      ).length;
  }

  // a bulk replay goes with the runs of its time; one still written (running) stays
  const { replayBatches } = db.t;
  const oldBatch = and(lt(replayBatches.startedAt, opts.cutoff), lt(replayBatches.updatedAt, opts.cutoff));
  if (dryRun) deleted.replayBatches = Number((await db.q.select({ n: count() }).from(replayBatches).where(oldBatch))[0]?.n ?? 0);
  else
    deleted.replayBatches = (
      await db.q
        .delete(replayBatches)
        .where(oldBatch)
        .returning({ one: sql`1` })
    ).length;
  // the audit trail is kept as long as the runs it speaks of (DESIGN: The dashboard, "Audit trail")
  deleted.auditEvents = await purgeAudit(db, opts.cutoff, { dryRun });

  const autoVacuum = autoVacuumOf(db);
  // incremental auto_vacuum gives the free pages back to the file system only when asked
  if (!dryRun && autoVacuum === 'incremental' && db.dialect === 'sqlite') db.$client.pragma('incremental_vacuum');
  return { cutoff: opts.cutoff, dryRun, deleted, keptLive: Number(live?.n ?? 0), before, after: await storageSize(db), autoVacuum };
}

/**
 * What became of the space a purge freed, as `aqven runs purge` says it: a SQLite file keeps its
 * size and reuses the freed pages unless it auto-vacuums (VACUUM shrinks it); PostgreSQL reuses the
 * space of deleted rows once (auto)vacuum has passed.
 */
export function purgeSpaceLine(db: Db, r: PurgeResult): string {
  if (db.dialect === 'pg') {
    return `Space: the run tables took ${formatBytes(r.before.bytes)} and take ${formatBytes(r.after.bytes)} now; PostgreSQL reuses the space of deleted rows once (auto)vacuum has passed — VACUUM FULL gives it back to the disk.`;
  }
  const freed = (r.after.freeBytes ?? 0) - (r.before.freeBytes ?? 0);
  if (r.dryRun) return `Space: the file has ${formatBytes(r.before.bytes)}, ${formatBytes(r.before.freeBytes ?? 0)} of it free.`;
  if (r.autoVacuum === 'none') {
    return (
      `Space: the file keeps its ${formatBytes(r.after.bytes)}; ${formatBytes(Math.max(0, freed))} of it became free pages (${formatBytes(r.after.freeBytes ?? 0)} free now), which new runs reuse. ` +
      'To shrink the file, stop every writer and run VACUUM (sqlite3 FILE "VACUUM").'
    );
  }
  return `Space: the file went from ${formatBytes(r.before.bytes)} to ${formatBytes(r.after.bytes)} (auto_vacuum ${r.autoVacuum}).`;
}
