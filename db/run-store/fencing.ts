// Fencing (DESIGN: Storage, "Leases"): a run's row is inserted with this process's lease, and every
// write transaction checks, once per run it touches, that the run's owner and fence are still ours;
// the facts of a run that changed hands (swept as dead, taken over) are refused, not written, and
// the run is told (onLost), as it is when its facts cannot be written at all.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type pg from 'pg';
import { LeaseLostError, type Lease, type LeaseKeeper } from '../run-lease';
import { bindColumns, valueStatement } from '../typed-sql';
import type { Db, Orm, SqliteDb } from '../types';

// SQLite checks a run's fence when the transaction first meets one of its facts. A fence changes
// only by another connection's commit (a take-over, or a sweep, runs in another process; this
// process's own sweep leaves the runs it holds alone), so a fence read or written once stays
// confirmed while PRAGMA data_version — which moves with every other connection's commit, never
// with this one's — reads as it did: read once per commit, inside its transaction, it spares the
// check of each run (one statement per run per commit).
function sqliteFences(db: SqliteDb) {
  const { runs: r } = db.t;
  const P = sql.placeholder;
  const st = valueStatement(
    db.$client,
    db.q
      .select({ id: r.id })
      .from(r)
      .where(and(eq(r.id, P('id')), eq(r.owner, P('owner')), eq(r.fence, P('fence')))),
    bindColumns(r, ['id', 'owner', 'fence']),
  );
  const version = db.$client.prepare('PRAGMA data_version').pluck();
  let seen: unknown = null;
  /** run id → the lease (owner, fence) its row was confirmed under */
  const confirmed = new Map<string, string>();
  const key = (l: Lease) => `${l.owner} ${l.fence}`;
  return {
    /** at the start of a commit, in its transaction: another connection committed since the last one — every fence is read again */
    begin: () => {
      const v = version.get();
      if (v !== seen) confirmed.clear();
      seen = v;
    },
    holds: (l: Lease) => {
      if (confirmed.get(l.runId) === key(l)) return true;
      const ok = st.get({ id: l.runId, owner: l.owner, fence: l.fence }) !== undefined;
      if (ok) confirmed.set(l.runId, key(l));
      return ok;
    },
    /** the run's row was just written under `l` in this commit */
    wrote: (l: Lease) => confirmed.set(l.runId, key(l)),
    /** the run is over here (ended, handed back, lost) */
    forget: (runId: string) => confirmed.delete(runId),
  };
}

/** PostgreSQL: the fences of `mine` (runs held here), read and share-locked (a take-over waits for this commit) */
async function readPgFences(db: Db, orm: Orm, client: pg.PoolClient, mine: string[], leases: Map<string, Lease>, inserting: Set<string>) {
  const { runs: r } = db.t;
  // locked in id order (bytewise, as JavaScript sorts), as the lease keeper renews them: two
  // transactions never wait on each other in a circle
  const built = orm
    .select({ id: r.id, owner: r.owner, fence: r.fence })
    .from(r)
    .where(inArray(r.id, mine))
    .orderBy(sql`${r.id} collate "C"`)
    .toSQL();
  const rows = (await client.query<{ id: string; owner: string | null; fence: number }>(`${built.sql} for share`, built.params)).rows;
  const found = new Map(rows.map((row) => [row.id, row]));
  return mine.map((id): [string, boolean] => {
    const lease = leases.get(id)!;
    const row = found.get(id);
    return [id, row ? row.owner === lease.owner && row.fence === lease.fence : inserting.has(id)];
  });
}

/**
 * The leases of the runs of a store and the fence of each commit. `forget`: what the rest of the
 * store keeps of a run that leaves it (its lease lost).
 */
export function runFencing(db: Db, keeper: LeaseKeeper, forget: (runId: string) => void) {
  /** the lease each run of this store was started with, while it runs */
  const leases = new Map<string, Lease>();
  /** runs whose first row is queued, not yet committed (PostgreSQL's fence check finds no row for them yet) */
  const inserting = new Set<string>();
  /** who hears that a run's facts were refused or could not be written */
  const onLost = new Map<string, (err: Error) => void>();
  /** runs whose lease was lost: nothing more of theirs is written */
  const lost = new Set<string>();
  const sqlite = db.dialect === 'sqlite' ? sqliteFences(db) : null; // PostgreSQL checks every run of a commit before it writes (fencePg)
  // per transaction: runs whose fence was checked (true = still ours), and runs refused
  let fenced = new Map<string, boolean>();
  let refused = new Set<string>();
  const fencing = {
    leases,
    inserting,
    onLost,
    lost,
    sqlite,
    get refused(): ReadonlySet<string> {
      return refused;
    },
    /** a commit starts: no run of it checked or refused yet */
    newCommit: () => {
      fenced = new Map();
      refused = new Set();
    },
    /** whether the facts of `runId` may be written in this commit (else the run is refused, and told after it) */
    ours: (runId: string): boolean => {
      let ok = fenced.get(runId);
      if (ok === undefined) {
        const lease = leases.get(runId);
        ok = !lost.has(runId) && (!lease || (sqlite?.holds(lease) ?? false));
        fenced.set(runId, ok);
      }
      if (!ok) refused.add(runId);
      return ok;
    },
    /** the row of `runId` was just written with `lease`, in this commit */
    wrote: (runId: string, lease: Lease) => {
      fenced.set(runId, true);
      sqlite?.wrote(lease);
    },
    /** PostgreSQL: the fences of a commit's runs, read and share-locked (a take-over waits for this commit) */
    fencePg: async (ids: string[], orm: Orm, client: pg.PoolClient): Promise<Map<string, boolean>> => {
      const seen = new Map<string, boolean>();
      const mine = ids.filter((id) => leases.has(id) && !lost.has(id));
      for (const id of ids) if (lost.has(id)) seen.set(id, false);
      if (mine.length) for (const [id, ok] of await readPgFences(db, orm, client, mine, leases, inserting)) seen.set(id, ok);
      for (const [id, ok] of seen) fenced.set(id, ok);
      return seen;
    },
    /** tells a run its facts were refused (the lease is gone: stop renewing) or could not be written (kept: it may still finish) */
    tell: (runId: string, err: Error) => {
      const f = onLost.get(runId);
      onLost.delete(runId);
      if (err instanceof LeaseLostError) {
        lost.add(runId); // nothing more of it is written
        leases.delete(runId);
        keeper.drop(runId);
        forget(runId);
      }
      f?.(err);
    },
  };
  return fencing;
}

export type Fencing = ReturnType<typeof runFencing>;
