// Run leases (DESIGN: Storage, "Leases"): a running run's row names its owner (a random id per
// process, not the pid), when the owner last renewed its claim and when the claim expires, and a
// fencing token. The owner renews every LEASE_HEARTBEAT_MS; a run whose lease has expired belongs
// to a dead (or frozen) process, and a sweep — here: mark it interrupted; later, with several
// workers: take it over and resume it — bumps the token, so a late write of the old owner is
// refused (db/run-store.ts checks the token in every write transaction). Every function takes the
// time as an argument: the callers pass the wall clock, the tests an injected one.
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { runs } from './schema';
import { valueStatement } from './typed-sql';
import type { Db } from './types';

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

/** The run's lease is missing or expired before the placeholder `now`: the run is no one's. */
export const leaseExpired = () => or(isNull(runs.leaseExpiresAt), lt(runs.leaseExpiresAt, sql.placeholder('now')));

const stmts = new WeakMap<Db, ReturnType<typeof prepare>>();
function prepare(db: Db) {
  const P = sql.placeholder;
  // the run's current claim: this owner, this fence (and, for renewals, still running)
  const claim = and(eq(runs.id, P('runId')), eq(runs.owner, P('owner')), eq(runs.fence, P('fence')));
  const running = eq(runs.status, 'running');
  return {
    renew: db
      .update(runs)
      .set({ heartbeatAt: sql`${P('now')}`, leaseExpiresAt: sql`${P('expiresAt')}` })
      .where(and(claim, running))
      .prepare(),
    release: db
      .update(runs)
      .set({ leaseExpiresAt: sql`${P('expiresAt')}` })
      .where(and(claim, running))
      .prepare(),
    // the fence check of every write transaction (db/run-store.ts): the hot path's binding
    holds: valueStatement(db.$client, db.select({ id: runs.id }).from(runs).where(claim), ['runId', 'owner', 'fence']),
    expired: db
      .select({ runId: runs.id, owner: runs.owner, fence: runs.fence, expiresAt: runs.leaseExpiresAt })
      .from(runs)
      .where(and(running, leaseExpired()))
      .prepare(),
    takeOver: db
      .update(runs)
      .set({ owner: sql`${P('owner')}`, fence: sql`${runs.fence} + 1`, heartbeatAt: sql`${P('now')}`, leaseExpiresAt: sql`${P('expiresAt')}` })
      .where(and(eq(runs.id, P('runId')), eq(runs.fence, P('fence')), running, leaseExpired()))
      .prepare(),
  };
}
function s(db: Db) {
  let hit = stmts.get(db);
  if (!hit) stmts.set(db, (hit = prepare(db)));
  return hit;
}

/** Extends `lease` to `now + LEASE_TTL_MS`; false when the run is no longer ours (or no longer running). */
export function renewLease(db: Db, lease: Lease, now: number): boolean {
  const expiresAt = now + LEASE_TTL_MS;
  const ok = s(db).renew.run({ now, expiresAt, runId: lease.runId, owner: lease.owner, fence: lease.fence }).changes === 1;
  if (ok) lease.expiresAt = expiresAt;
  return ok;
}

/** Gives a running run up without finishing it: its lease expires at once, so another worker may take it over. */
export function releaseLease(db: Db, lease: Lease, now: number): boolean {
  return s(db).release.run({ expiresAt: now - 1, runId: lease.runId, owner: lease.owner, fence: lease.fence }).changes === 1;
}

/** Whether `lease` is still the run's current claim (same owner, same fence). */
export function holdsLease(db: Db, lease: Pick<Lease, 'runId' | 'owner' | 'fence'>): boolean {
  return s(db).holds.get(lease.runId, lease.owner, lease.fence) !== undefined;
}

/** Running runs whose lease expired before `now`, except those in `except` (this process's own live runs). */
export function expiredLeases(db: Db, now: number, except: ReadonlySet<string> = new Set()): ExpiredLease[] {
  return s(db).expired.all({ now }).filter((r) => !except.has(r.runId));
}

/**
 * Claims an expired run for `owner` (compare-and-set on its fence): the new lease, or null when the
 * run was renewed, finished or taken by someone else meanwhile. The previous owner's writes are
 * refused from here on. The sweep of a single-process deployment marks the run interrupted
 * instead (db/client.ts, sweepExpiredRuns); a worker pool would take it over and resume it.
 */
export function takeOver(db: Db, run: Pick<ExpiredLease, 'runId' | 'fence'>, now: number, owner = PROCESS_OWNER): Lease | null {
  const expiresAt = now + LEASE_TTL_MS;
  const changed = s(db).takeOver.run({ owner, now, expiresAt, runId: run.runId, fence: run.fence }).changes === 1;
  return changed ? { runId: run.runId, owner, fence: run.fence + 1, expiresAt } : null;
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
      this.timer = setInterval(() => this.tick(), LEASE_HEARTBEAT_MS);
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

  /** One heartbeat: renews every held lease; returns the run ids whose lease was lost. */
  tick(now = this.now()): string[] {
    const lost: string[] = [];
    try {
      this.db.$client.transaction(() => {
        for (const { lease } of this.held.values()) if (!renewLease(this.db, lease, now)) lost.push(lease.runId);
      })();
    } catch {
      return []; // a storage failure: retried at the next beat
    }
    for (const id of lost) this.lose(id);
    return lost;
  }
}

const keepers = new WeakMap<Db, LeaseKeeper>();

/** The lease keeper of `db` (one per connection); `path` names the database in errors. */
export function leaseKeeper(db: Db, path = db.$client.name): LeaseKeeper {
  let k = keepers.get(db);
  if (!k) keepers.set(db, (k = new LeaseKeeper(db, path)));
  return k;
}
