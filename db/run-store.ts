// Writes of a run as it happens (DESIGN: Storage). A finished attempt, a finished run and a
// rate-limit pause are each committed synchronously (with everything queued before them) before
// the engine acts on them; the other facts follow within FLUSH_MS. Prepared statements are made
// once per connection: this is the hot path of every attempt.
//
// The store is composed of one part per concern, under db/run-store/: statements.ts (bound by
// name), backends.ts (each dialect's prepare and commit), write-queue.ts (write-behind, durable
// points, FLUSH_MS), fencing.ts (leases, fences, onLost), adopt.ts (take-over reads), feeds.ts
// (daily sums, spend), run-facts.ts / node-facts.ts / attempt-facts.ts / pauses.ts (the facts),
// cut-off.ts (the sweeps' closing of what a dead process left open).
//
// Fencing (DESIGN: Storage, leases): a run's row is inserted with this process's lease, and every
// write transaction checks, once per run it touches, that the run's owner and fence are still
// ours; the facts of a run that changed hands (swept as dead, taken over) are refused, not
// written, and the run is told (onLost), as it is when its facts cannot be written at all.
//
// Both dialects (DESIGN: Storage, "One data layer, two dialects"): the statements are built once
// with drizzle over `db.t`. SQLite runs them synchronously on its one connection and commits the
// queue in one synchronous transaction; PostgreSQL sends the same statements, in order, on one
// pooled connection per commit, the fence checks first (`FOR SHARE`: a take-over waits for the
// commit), and commits one queue at a time — whatever arrives meanwhile shares the next commit.
//
// Feeds (DESIGN: Storage, "Notes, search and daily statistics"), written in the same commit as the
// facts they come from, by the rules of db/run-aggregates.ts: search_docs rows for a run's input,
// each finished node's output and each failure's text; failure_sig on a failed attempt or node, in
// the statement that finishes it; and, for `flow` runs only, agent_daily / node_daily /
// failure_daily sums, gathered per commit and upserted once per key at its end.
import { leaseKeeper } from './run-lease';
import type { Db } from './types';
import { adoptReads } from './run-store/adopt';
import { attemptFacts } from './run-store/attempt-facts';
import { pgBackend, sqliteBackend, type FenceCheck } from './run-store/backends';
import type { StoreContext } from './run-store/context';
import { runFeeds } from './run-store/feeds';
import { runFencing } from './run-store/fencing';
import { nodeFacts } from './run-store/node-facts';
import { pauseFacts } from './run-store/pauses';
import { runFacts } from './run-store/run-facts';
import { storeStatements } from './run-store/statements';
import type { RunStore } from './run-store/types';
import { writeQueue, type Fact } from './run-store/write-queue';

export { closeCutOffAttempts, failCutOffNodes } from './run-store/cut-off';
export type { RunKind, RunStore } from './run-store/types';
export { FLUSH_MS } from './run-store/write-queue';

const cache = new WeakMap<Db, RunStore>();

/** Writes what the store of `db` has queued, if it has a store. */
export async function flushRunStore(db: Db): Promise<void> {
  await cache.get(db)?.flush();
}

/** the parts a store's facts are written by, over one connection's statements */
function storeContext(db: Db) {
  const backend = db.dialect === 'sqlite' ? sqliteBackend(db) : pgBackend(db);
  const s = storeStatements(db.q, db.t, backend.prepare);
  const keeper = leaseKeeper(db);
  const feeds = runFeeds(s);
  const adopt = adoptReads(db, feeds);
  const turnsDue = new Map<string, number>();
  const forget = (runId: string) => {
    fencing.sqlite?.forget(runId);
    feeds.forget(runId);
    turnsDue.delete(runId);
    adopt.unread.delete(runId);
  };
  const fencing = runFencing(db, keeper, forget);
  /** a commit's facts, in the order queued, inside its transaction: those of runs no longer ours refused; its sums and spend last */
  const drain = (batch: Fact[]) => {
    fencing.sqlite?.begin();
    feeds.begin();
    for (const f of batch) if (f.runId === null || fencing.ours(f.runId)) f.write();
    feeds.end();
  };
  /** PostgreSQL: the adopted runs of a commit read first (their kind, input, open nodes' agents), then the fences */
  const before: FenceCheck = async (ids, orm, client) => {
    await adopt.readPg(ids, client);
    return fencing.fencePg(ids, orm, client);
  };
  const queue = writeQueue(db, backend, fencing, drain, before);
  const ctx: StoreContext = { db, s, keeper, fencing, feeds, adopt, queue, turnsDue, forget };
  return { ctx, backend };
}

/** The run store of `db`: one per connection, made on first use (its statements prepared once). */
export function runStore(db: Db): RunStore {
  const hit = cache.get(db);
  if (hit) return hit;
  const { ctx, backend } = storeContext(db);
  const store: RunStore = {
    ...pauseFacts(ctx),
    ...runFacts(ctx),
    ...nodeFacts(ctx),
    ...attemptFacts(ctx),
    flush: () => ctx.queue.commit().then(() => backend.afterFlush()),
  };
  cache.set(db, store);
  return store;
}
