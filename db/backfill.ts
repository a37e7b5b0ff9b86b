// Failure signatures for a history recorded before they existed (DESIGN: Storage, "Notes, search and
// daily statistics"). The team-debugging migration fills agent_daily, node_daily and search_docs
// in SQL; a signature needs lib/shared/failure-signature.ts's normaliser, so failed attempts and
// nodes written before it are stamped here, and counted in failure_daily, once per database: the
// first open after the migration does it, in batches (one transaction each), then writes the
// settings row FAILURE_SIG_BACKFILL; every later open reads that row and stops.
//
// Concurrent openers (workers starting together) count nothing twice: a row is stamped by an
// UPDATE … WHERE failure_sig IS NULL, and only the rows that UPDATE returns are summed, in the same
// transaction. A row the live store finished is stamped already, so it is never summed again.
import { and, asc, eq, gt, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { attemptSignature, DailySums, nodeSignature, writeDailySums } from './run-aggregates';
import { transaction } from './tx';
import type { Db, Orm } from './types';

/** the settings row that says the backfill is done */
export const FAILURE_SIG_BACKFILL = 'backfill:failure_sig';

/** rows read per transaction: short write locks on SQLite, bounded memory */
const BATCH = 2000;

export interface BackfillResult {
  /** attempts and nodes this call stamped */
  attempts: number;
  nodes: number;
  /** false: the settings row said it was done already */
  ran: boolean;
}

/**
 * Stamps the failed attempts and nodes that have no signature yet and sums them; once per database,
 * or again with `force` (rows copied in from an older history after the database's own backfill).
 */
export async function backfillFailureSignatures(db: Db, opts: { batch?: number; force?: boolean } = {}): Promise<BackfillResult> {
  const { settings } = db.t;
  const done = opts.force ? [] : await db.q.select({ value: settings.value }).from(settings).where(eq(settings.key, FAILURE_SIG_BACKFILL));
  if (done.length) return { attempts: 0, nodes: 0, ran: false };
  const batch = opts.batch ?? BATCH;
  let attempts = 0;
  let nodes = 0;
  for (let after: AttemptKey | null | undefined = undefined; after !== null;) {
    const from: AttemptKey | undefined = after;
    const r: Batch<AttemptKey> = await transaction(db, (q) => attemptBatch(db, q, from, batch));
    attempts += r.stamped;
    after = r.last;
  }
  for (let after: string | null = ''; after !== null;) {
    const from: string = after;
    const r: Batch<string> = await transaction(db, (q) => nodeBatch(db, q, from, batch));
    nodes += r.stamped;
    after = r.last;
  }
  await db.q.insert(settings).values({ key: FAILURE_SIG_BACKFILL, value: 'done' }).onConflictDoNothing();
  return { attempts, nodes, ran: true };
}

/** the next batch after `after`: `last` is the key to go on from, null when there is no more */
type Batch<K> = { stamped: number; last: K | null };

/** an attempt's place in attempts_cause_idx (cause, run_id), the id breaking ties */
type AttemptKey = { cause: string; runId: string; id: string };

/** `rows` grouped by signature: one UPDATE per signature of the batch (a few dozen), not one per row */
function bySig<R extends { id: string }>(rows: R[], sigOf: (r: R) => string): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    const sig = sigOf(r);
    const list = out.get(sig);
    if (list) list.push(r);
    else out.set(sig, [r]);
  }
  return out;
}

/**
 * The next failed attempts without a signature, in the order of attempts_cause_idx (partial: only
 * attempts with a cause), so that a pass reads the failed attempts, not every attempt.
 */
async function attemptBatch(db: Db, q: Orm, after: AttemptKey | undefined, limit: number): Promise<Batch<AttemptKey>> {
  const { attempts, nodeRuns, runs } = db.t;
  const rows = await q
    .select({
      id: attempts.id,
      runId: attempts.runId,
      agent: nodeRuns.agent,
      kind: runs.kind,
      model: attempts.model,
      cause: attempts.cause,
      errorMessage: attempts.errorMessage,
      costUsd: attempts.costUsd,
      startedAt: attempts.startedAt,
    })
    .from(attempts)
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .innerJoin(runs, eq(runs.id, attempts.runId))
    // isFailedAttempt: an outcome and a cause
    .where(
      and(
        isNotNull(attempts.cause),
        after && sql`(${attempts.cause}, ${attempts.runId}, ${attempts.id}) > (${after.cause}, ${after.runId}, ${after.id})`,
        isNotNull(attempts.outcome),
        isNull(attempts.failureSig),
      ),
    )
    .orderBy(asc(attempts.cause), asc(attempts.runId), asc(attempts.id))
    .limit(limit);
  if (!rows.length) return { stamped: 0, last: null };
  const sums = new DailySums();
  const sigs = new Map(rows.map((r) => [r.id, attemptSignature(r.agent, r)]));
  let stamped = 0;
  for (const [sig, group] of bySig(rows, (r) => sigs.get(r.id)!.sig)) {
    const won = await q
      .update(attempts)
      .set({ failureSig: sig })
      .where(
        and(
          inArray(
            attempts.id,
            group.map((r) => r.id),
          ),
          isNull(attempts.failureSig),
        ),
      )
      .returning({ id: attempts.id });
    stamped += won.length;
    const mine = new Set(won.map((w) => w.id));
    for (const r of group) {
      if (!mine.has(r.id) || r.kind !== 'flow') continue;
      sums.failure({ sig: sigs.get(r.id)!, level: 'attempt', agent: r.agent, model: r.model, code: r.cause ?? '', costUsd: r.costUsd, at: r.startedAt });
    }
  }
  await writeDailySums(db, q, sums);
  const last = rows.at(-1)!;
  return { stamped, last: rows.length < limit ? null : { cause: last.cause!, runId: last.runId, id: last.id } };
}

/** The next failed nodes without a signature, in id order (node_runs has no index on status: one pass over it). */
async function nodeBatch(db: Db, q: Orm, after: string, limit: number): Promise<Batch<string>> {
  const { nodeRuns, runs } = db.t;
  const rows = await q
    .select({
      id: nodeRuns.id,
      agent: nodeRuns.agent,
      kind: runs.kind,
      code: nodeRuns.errorCode,
      message: nodeRuns.errorMessage,
      costUsd: nodeRuns.costUsd,
      startedAt: nodeRuns.startedAt,
      finishedAt: nodeRuns.finishedAt,
      runStartedAt: runs.startedAt,
    })
    .from(nodeRuns)
    .innerJoin(runs, eq(runs.id, nodeRuns.runId))
    .where(and(gt(nodeRuns.id, after), eq(nodeRuns.status, 'failed'), isNull(nodeRuns.failureSig)))
    .orderBy(asc(nodeRuns.id))
    .limit(limit);
  if (!rows.length) return { stamped: 0, last: null };
  const sums = new DailySums();
  const sigs = new Map(rows.map((r) => [r.id, nodeSignature(r.agent, r)]));
  let stamped = 0;
  for (const [sig, group] of bySig(rows, (r) => sigs.get(r.id)!.sig)) {
    const won = await q
      .update(nodeRuns)
      .set({ failureSig: sig })
      .where(
        and(
          inArray(
            nodeRuns.id,
            group.map((r) => r.id),
          ),
          isNull(nodeRuns.failureSig),
        ),
      )
      .returning({ id: nodeRuns.id });
    stamped += won.length;
    const mine = new Set(won.map((w) => w.id));
    for (const r of group) {
      if (!mine.has(r.id) || r.kind !== 'flow') continue;
      // as the store counts it: the node's start, else its end (a node failed before it started)
      const at = r.startedAt ?? r.finishedAt ?? r.runStartedAt;
      sums.failure({ sig: sigs.get(r.id)!, level: 'node', agent: r.agent, model: '', code: r.code ?? '', costUsd: r.costUsd, at });
    }
  }
  await writeDailySums(db, q, sums);
  return { stamped, last: rows.length < limit ? null : rows.at(-1)!.id };
}

const opened = new WeakMap<Db, Promise<void>>();

/**
 * The backfill, once per opened database per process (openDatabase calls it): a settings read
 * when it is done. Best effort: a database this process may only read is left to a writer; any
 * other failure is said once, on stderr, and tried again at the next open.
 */
export function backfillOnOpen(db: Db): Promise<void> {
  let p = opened.get(db);
  if (!p) {
    p = backfillFailureSignatures(db).then(
      () => undefined,
      (err: unknown) => {
        opened.delete(db);
        const code = String((err as { code?: unknown }).code ?? '');
        if (code.startsWith('SQLITE_READONLY') || code === '25006') return; // read-only (SQLite; PostgreSQL's read_only_sql_transaction)
        console.error(`aqven: stamping failure signatures on older runs failed (tried again at the next open): ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    opened.set(db, p);
  }
  return p;
}
