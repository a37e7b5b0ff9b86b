// Run leases with an injected clock (DESIGN: Storage, leases), on both dialects: a lease nobody
// renews is swept (SQLite) or taken over (a compare-and-set), a live (renewed) one is not, and a
// write carrying a stale fencing token is refused. A second connection to the same database
// stands for another process.
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, openTestDb, otherProcess, type TestDb } from '../test/helpers/dialects';
import { markInterrupted } from './client';
import { expiredLeases, holdsLease, LEASE_TTL_MS, leaseKeeper, LeaseLostError, newLease, releaseLease, renewLease, takeOver } from './run-lease';
import { runStore } from './run-store';
import type { Db } from './types';

const T0 = 1_700_000_000_000;
const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

describe.each(DIALECTS)('run leases on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  let other: Db;
  let closeOther: () => Promise<void>;
  let n = 0;
  /** a fresh run id: the database is shared by the file's tests */
  const id = (s: string) => `${s}-${++n}`;
  beforeAll(async () => {
    t = await openTestDb(dialect);
    db = t.db;
    const o = otherProcess(t);
    other = o.db;
    closeOther = o.close;
  }, 90_000);
  afterAll(async () => {
    await closeOther?.();
    await t?.close();
  });

  const row = async (runId: string) => {
    const r = db.t.runs;
    const [x] = await db.q.select({ status: r.status, owner: r.owner, fence: r.fence, heartbeatAt: r.heartbeatAt, expiresAt: r.leaseExpiresAt }).from(r).where(eq(r.id, runId));
    return x;
  };

  it('a run is inserted with its owner, fence 1, heartbeat and expiry; the keeper renews it', async () => {
    const r = id('r');
    await runStore(db).insertRun({ id: r, project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease(r, T0, 'me') });
    expect(await row(r)).toEqual({ status: 'running', owner: 'me', fence: 1, heartbeatAt: T0, expiresAt: T0 + LEASE_TTL_MS });
    expect(await leaseKeeper(db).tick(T0 + 5_000)).toEqual([]);
    expect(await row(r)).toMatchObject({ heartbeatAt: T0 + 5_000, expiresAt: T0 + 5_000 + LEASE_TTL_MS });
    leaseKeeper(db).drop(r);
  });

  it('a lease not renewed is found expired by another process; a live run, renewed by its keeper, is not', async () => {
    const [live, dead] = [id('live'), id('dead')];
    const s = runStore(db);
    // far from the other tests' times: each test's runs are the only ones in its window
    const t0 = T0 + 1_000_000;
    await s.insertRun({ id: live, project: 'p', flow: 'f', input: {}, startedAt: t0, lease: newLease(live, t0) });
    await s.insertRun({ id: dead, project: 'p', flow: 'f', input: {}, startedAt: t0, lease: newLease(dead, t0) });
    s.insertNode({ id: `${dead}-n`, runId: dead, nodeId: 'n', agent: 'a', turn: 1, ord: 0, status: 'running', policy: null, startedAt: t0 });
    await s.flush();
    leaseKeeper(db).drop(dead); // its owner stops beating: a process that died

    const mine = (xs: { runId: string }[]) => xs.map((x) => x.runId).filter((x) => x === live || x === dead);
    expect(mine(await expiredLeases(other, t0 + LEASE_TTL_MS - 1))).toEqual([]);
    await leaseKeeper(db).tick(t0 + 15_000); // the live run's heartbeat
    expect(mine(await expiredLeases(other, t0 + LEASE_TTL_MS + 1))).toEqual([dead]);
    if (dialect === 'sqlite') {
      // SQLite's sweep marks it interrupted (PostgreSQL's workers take it over instead)
      expect(await markInterrupted(other, t0 + LEASE_TTL_MS + 1)).toBeGreaterThanOrEqual(1);
      expect(await row(dead)).toMatchObject({ status: 'interrupted', fence: 2 }); // the sweep bumps the fence
      const nr = db.t.nodeRuns;
      expect(
        await db.q
          .select({ status: nr.status, code: nr.errorCode })
          .from(nr)
          .where(eq(nr.id, `${dead}-n`)),
      ).toEqual([{ status: 'failed', code: 'interrupted' }]);
      // the live run's own process never sweeps it, even when its beats are late
      await markInterrupted(db, t0 + 10 * LEASE_TTL_MS);
      expect(await row(live)).toMatchObject({ status: 'running', fence: 1 });
    } else {
      expect(await takeOver(other, { runId: dead, fence: 1 }, t0 + LEASE_TTL_MS + 1, 'w2')).toMatchObject({ owner: 'w2', fence: 2 });
      expect(await row(live)).toMatchObject({ status: 'running', fence: 1 });
    }
    leaseKeeper(db).drop(live);
  });

  it('a write with a stale fencing token is refused, and the run is told', async () => {
    const r = id('r');
    const s = runStore(db);
    const lost: Error[] = [];
    await s.insertRun({ id: r, project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease(r, T0), onLost: (e) => lost.push(e) });
    // the lease expires unrenewed (a frozen process) and a worker takes the run over
    const theirs = await takeOver(other, { runId: r, fence: 1 }, T0 + LEASE_TTL_MS + 1, 'worker-2');
    // the dead owner was last seen at its insert (never renewed)
    expect(theirs).toEqual({ runId: r, owner: 'worker-2', fence: 2, expiresAt: T0 + 2 * LEASE_TTL_MS + 1, lastSeenAt: T0 });
    // the old owner wakes up and writes with its stale token: refused, nothing written
    s.insertNode({ id: `${r}-late`, runId: r, nodeId: 'n', agent: 'a', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    const finished = s.finishRun({ id: r, status: 'succeeded', output: { x: 1 }, error: null, turns: 1, usage, finishedAt: T0 + 1 });
    await expect(finished).rejects.toBeInstanceOf(LeaseLostError);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    expect(lost[0]!.message).toMatch(new RegExp(`^run ${r} lost its lease on `));
    expect(await row(r)).toMatchObject({ status: 'running', owner: 'worker-2', fence: 2 });
    const nr = db.t.nodeRuns;
    expect(await db.q.select({ n: count() }).from(nr).where(eq(nr.runId, r))).toEqual([{ n: 0 }]);
    // and its heartbeat cannot revive the old lease
    expect(await renewLease(db, newLease(r, T0), T0 + LEASE_TTL_MS + 2)).toBe(false);
    expect(await holdsLease(other, theirs!)).toBe(true);
  });

  it('a dead owner was last seen at its latest recorded fact when that is later than its heartbeat: the take-over and the sweep end its work there', async () => {
    // one heartbeat (the insert, T0), then a node, an attempt and a failed try 3.5 s later; then nothing
    const facts = async (r: string) => {
      const s = runStore(db);
      await s.insertRun({ id: r, project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease(r, T0) });
      s.insertNode({ id: `${r}-n`, runId: r, nodeId: 'n', agent: 'a', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 + 1_000 });
      s.startAttempt({ id: `${r}-a`, nodeRunId: `${r}-n`, runId: r, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 + 2_000 });
      s.insertTry(`${r}-a`, { tryNo: 1, status: 500, error: 'server_error', retryAfterMs: null, waitedMs: 0, startedAt: T0 + 2_000, finishedAt: T0 + 3_500 });
      await s.flush();
      leaseKeeper(db).drop(r); // the owner dies
    };
    const taken = id('seen');
    await facts(taken);
    expect(await takeOver(other, { runId: taken, fence: 1 }, T0 + 10 * LEASE_TTL_MS, 'w2')).toMatchObject({ owner: 'w2', lastSeenAt: T0 + 3_500 });
    leaseKeeper(other).drop(taken);
    if (dialect !== 'sqlite') return; // the sweep is SQLite's; PostgreSQL's workers take dead runs over
    const swept = id('seen');
    await facts(swept);
    expect(await markInterrupted(other, T0 + 10 * LEASE_TTL_MS)).toBeGreaterThanOrEqual(1);
    const { runs: r, nodeRuns: n, attempts: a } = db.t;
    expect(await db.q.select({ status: r.status, finishedAt: r.finishedAt }).from(r).where(eq(r.id, swept))).toEqual([{ status: 'interrupted', finishedAt: T0 + 3_500 }]);
    expect(await db.q.select({ finishedAt: n.finishedAt }).from(n).where(eq(n.runId, swept))).toEqual([{ finishedAt: T0 + 3_500 }]);
    expect(await db.q.select({ finishedAt: a.finishedAt }).from(a).where(eq(a.runId, swept))).toEqual([{ finishedAt: T0 + 3_500 }]);
  });

  it('take-over is a compare-and-set: refused while the lease is live or after someone else took it; a released lease is free at once', async () => {
    const r = id('r');
    const lease = newLease(r, T0);
    await runStore(db).insertRun({ id: r, project: 'p', flow: 'f', input: {}, startedAt: T0, lease });
    expect(await takeOver(other, { runId: r, fence: 1 }, T0 + 1_000, 'w2')).toBeNull(); // live
    expect(await releaseLease(db, lease, T0 + 1_000)).toBe(true); // handed back without finishing
    expect(await takeOver(other, { runId: r, fence: 1 }, T0 + 1_000, 'w2')).toMatchObject({ owner: 'w2', fence: 2 });
    expect(await takeOver(other, { runId: r, fence: 1 }, T0 + 100 * LEASE_TTL_MS, 'w3')).toBeNull(); // stale fence
    leaseKeeper(db).drop(r);
  });

  it('two processes taking over the same run at once: exactly one wins', async () => {
    const r = id('race');
    await runStore(db).insertRun({ id: r, project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease(r, T0) });
    leaseKeeper(db).drop(r);
    const later = T0 + LEASE_TTL_MS + 1;
    const won = await Promise.all([takeOver(db, { runId: r, fence: 1 }, later, 'a'), takeOver(other, { runId: r, fence: 1 }, later, 'b')]);
    expect(won.filter(Boolean)).toHaveLength(1);
  });
});
