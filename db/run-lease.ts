// Run leases (DESIGN: Storage, "Leases"): a running run's row names its owner (a random id per
// process, not the pid), when the owner last renewed its claim and when the claim expires, and a
// fencing token. The owner renews every LEASE_HEARTBEAT_MS; a run whose lease has expired belongs
// to a dead (or frozen) process, and a sweep — here: mark it interrupted; later, with several
// workers: take it over and resume it — bumps the token, so a late write of the old owner is
// refused (db/run-store.ts checks the token in every write transaction). Every function takes the
// time as an argument: the callers pass the wall clock, the tests an injected one.
import { and, eq, isNull, lt, max, or, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { transaction } from './tx';
import type { Db, Orm, Tables } from './types';

/** how often an owner renews the leases of its running runs */
export const LEASE_HEARTBEAT_MS = 5_000;
/** how long a lease lasts without renewal: four heartbeats, so one slow tick never loses a run */
export const LEASE_TTL_MS = 20_000;
/** how often the dashboard's server sweeps expired leases (reads sweep too, at most every READ_SWEEP_MS) */
export const LEASE_SWEEP_MS = 5_000;
/** the shortest gap between two sweeps triggered by reads of the run history */
export const READ_SWEEP_MS = 1_000;

/** This process's owner id: random, so a reused pid never passes for a live owner. */
export const PROCESS_OWNER: string = randomUUID();

/** A claim on one running run. `fence` is the token every write of the run is checked against. */
export interface Lease {
  runId: string;
  owner: string;
  fence: number;
  expiresAt: number;
}

/** A running run whose lease has expired (or that has none: a row from before leases). */
export interface ExpiredLease {
  runId: string;
  owner: string | null;
  fence: number;
  expiresAt: number | null;
  /** the owner's last renewal (`heartbeat_at`): the last time it was known alive; null for a row from before leases */
  lastSeenAt: number | null;
}

/**
 * When a dead owner's unfinished work ended, as far as anyone can tell: when it was last seen alive
 * (lastSeenAlive: its last heartbeat or a later fact it recorded), not the
 * time a sweep or a take-over found it (which may come hours later, when a command next opens the
 * database) — never before the thing's own start, nor after `now`.
 */
export function cutOffAt(lastSeenAt: number | null, now: number, startedAt?: number | null): number {
  const seen = lastSeenAt === null ? now : Math.min(lastSeenAt, now);
  return startedAt === null || startedAt === undefined ? seen : Math.max(seen, Math.min(startedAt, now));
}

/**
 * When a dead owner was last seen alive on a run: the later of its last heartbeat and the latest
 * time among the facts it recorded for the run (a node's start or end, an attempt's, a try's end) —
 * a fact is written by a live process, a heartbeat comes only every LEASE_HEARTBEAT_MS. Null (a row
 * from before leases) stays null. Read in the caller's transaction, before the run is closed.
 */
export async function lastSeenAlive(q: Orm, t: Tables, runId: string, heartbeatAt: number | null): Promise<number | null> {
  if (heartbeatAt === null) return null;
  const { nodeRuns: n, attempts: a, transportTries: tr } = t;
  const [nodes] = await q
    .select({ started: max(n.startedAt), finished: max(n.finishedAt) })
    .from(n)
    .where(eq(n.runId, runId));
  const [atts] = await q
    .select({ started: max(a.startedAt), finished: max(a.finishedAt) })
    .from(a)
    .where(eq(a.runId, runId));
  const [tries] = await q
    .select({ finished: max(tr.finishedAt) })
    .from(tr)
    .innerJoin(a, eq(tr.attemptId, a.id))
    .where(eq(a.runId, runId));
  const times = [nodes?.started, nodes?.finished, atts?.started, atts?.finished, tries?.finished];
  return times.reduce<number>((latest, at) => (at === null || at === undefined ? latest : Math.max(latest, Number(at))), heartbeatAt);
}

/** A lease won from a dead owner (`takeOver`), with when that owner was last seen alive. */
export interface TakenOver extends Lease {
  /** when the previous owner was last seen alive (lastSeenAlive); null for a row from before leases */
  lastSeenAt: number | null;
}

/** The run is no longer ours: its lease expired and another process swept or took it over. */
export class LeaseLostError extends Error {
  constructor(
    readonly runId: string,
    readonly path: string,
  ) {
    super(
      `run ${runId} lost its lease on ${path}: this process did not renew it for ${LEASE_TTL_MS / 1000} s ` +
        `(was it suspended?), and another process has marked the run interrupted; its later facts were not recorded`,
    );
    this.name = 'LeaseLostError';
  }
}

/** The lease a new run's row is inserted with (fence 1). */
export function newLease(runId: string, now: number, owner = PROCESS_OWNER): Lease {
  return { runId, owner, fence: 1, expiresAt: now + LEASE_TTL_MS };
}

/** The run's lease is missing or expired before `now`: the run is no one's. */
export const expiredBefore = (r: Tables['runs'], now: number) => or(isNull(r.leaseExpiresAt), lt(r.leaseExpiresAt, now));

const claimOn = (r: Tables['runs'], l: Pick<Lease, 'runId' | 'owner' | 'fence'>) => and(eq(r.id, l.runId), eq(r.owner, l.owner), eq(r.fence, l.fence));

/** Extends `lease` to `now + LEASE_TTL_MS`; false when the run is no longer ours (or no longer running). */
export async function renewLease(db: Db, lease: Lease, now: number, q: Orm = db.q): Promise<boolean> {
  const { runs: r } = db.t;
  const expiresAt = now + LEASE_TTL_MS;
  const done = await q
    .update(r)
    .set({ heartbeatAt: now, leaseExpiresAt: expiresAt })
    .where(and(claimOn(r, lease), eq(r.status, 'running')))
    .returning({ id: r.id });
  if (done.length) lease.expiresAt = expiresAt;
  return done.length === 1;
}

/** Gives a running run up without finishing it: its lease expires at once, so another worker may take it over. */
export async function releaseLease(db: Db, lease: Lease, now: number): Promise<boolean> {
  const { runs: r } = db.t;
  const done = await db.q
    .update(r)
    .set({ leaseExpiresAt: now - 1 })
    .where(and(claimOn(r, lease), eq(r.status, 'running')))
    .returning({ id: r.id });
  return done.length === 1;
}

/** Whether `lease` is still the run's current claim (same owner, same fence). */
export async function holdsLease(db: Db, lease: Pick<Lease, 'runId' | 'owner' | 'fence'>): Promise<boolean> {
  const { runs: r } = db.t;
  return (await db.q.select({ id: r.id }).from(r).where(claimOn(r, lease)).limit(1)).length === 1;
}

/** Running runs whose lease expired before `now`, except those in `except` (this process's own live runs). */
export async function expiredLeases(db: Db, now: number, except: ReadonlySet<string> = new Set()): Promise<ExpiredLease[]> {
  const { runs: r } = db.t;
  const rows = await db.q
    .select({ runId: r.id, owner: r.owner, fence: r.fence, expiresAt: r.leaseExpiresAt, lastSeenAt: r.heartbeatAt })
    .from(r)
    .where(and(eq(r.status, 'running'), expiredBefore(r, now)));
  return rows.filter((x) => !except.has(x.runId));
}

/**
 * Claims an expired run for `owner` (compare-and-set on its fence): the new lease, or null when the
 * run was renewed, finished or taken by someone else meanwhile. The previous owner's writes are
 * refused from here on. SQLite's sweep marks the run interrupted instead (db/client.ts,
 * sweepExpiredRuns); a worker takes it over and resumes it (lib/queue/take-over.ts).
 */
export async function takeOver(db: Db, run: Pick<ExpiredLease, 'runId' | 'fence'>, now: number, owner = PROCESS_OWNER, q: Orm = db.q): Promise<TakenOver | null> {
  const { runs: r } = db.t;
  const expiresAt = now + LEASE_TTL_MS;
  // the dead owner's last heartbeat, read before the claim overwrites it (in the caller's transaction)
  const [before] = await q
    .select({ at: r.heartbeatAt })
    .from(r)
    .where(and(eq(r.id, run.runId), eq(r.fence, run.fence)));
  const lastSeenAt = before ? await lastSeenAlive(q, db.t, run.runId, before.at) : null;
  const done = await q
    .update(r)
    .set({ owner, fence: sql`${r.fence} + 1`, heartbeatAt: now, leaseExpiresAt: expiresAt, pid: process.pid })
    .where(and(eq(r.id, run.runId), eq(r.fence, run.fence), eq(r.status, 'running'), expiredBefore(r, now)))
    .returning({ id: r.id });
  return done.length === 1 ? { runId: run.runId, owner, fence: run.fence + 1, expiresAt, lastSeenAt } : null;
}

interface Held {
  lease: Lease;
  onLost: (err: LeaseLostError) => void;
}

/**
 * Renews the leases this process holds on one database, every LEASE_HEARTBEAT_MS (an unref'd
 * timer: it never keeps a process alive). A lease that cannot be renewed because the run changed
 * hands is dropped and its holder told (it stops the run). A renewal that fails for a storage
 * error is tried again at the next beat; the run's own writes report the failure.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly path: string,
    private readonly now: () => number = Date.now,
  ) {}

  hold(lease: Lease, onLost: (err: LeaseLostError) => void): void {
    this.held.set(lease.runId, { lease, onLost });
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), LEASE_HEARTBEAT_MS);
      this.timer.unref();
    }
  }

  /** Stops renewing (the run finished, or is given up). */
  drop(runId: string): void {
    this.held.delete(runId);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  lease(runId: string): Lease | undefined {
    return this.held.get(runId)?.lease;
  }

  heldRunIds(): ReadonlySet<string> {
    return new Set(this.held.keys());
  }

  /** The run changed hands: stop renewing and tell its holder. */
  lose(runId: string): void {
    const h = this.held.get(runId);
    if (!h) return;
    this.drop(runId);
    h.onLost(new LeaseLostError(runId, this.path));
  }

  /** One heartbeat: renews every held lease; resolves with the run ids whose lease was lost. */
  async tick(now = this.now()): Promise<string[]> {
    const lost: string[] = [];
    // in id order, as the run store locks them (db/run-store.ts): no two transactions wait on each other in a circle
    const held = [...this.held.values()].map((h) => h.lease).sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
    if (!held.length) return lost;
    try {
      await transaction(this.db, async (q) => {
        for (const lease of held) if (!(await renewLease(this.db, lease, now, q))) lost.push(lease.runId);
      });
    } catch {
      return []; // a storage failure: retried at the next beat
    }
    for (const id of lost) this.lose(id);
    return lost;
  }
}

const keepers = new WeakMap<Db, LeaseKeeper>();

/** The lease keeper of `db` (one per connection); `path` names the database in errors. */
export function leaseKeeper(db: Db, path = db.name): LeaseKeeper {
  let k = keepers.get(db);
  if (!k) keepers.set(db, (k = new LeaseKeeper(db, path)));
  return k;
}
