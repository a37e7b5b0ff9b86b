// Run leases with an injected clock (DESIGN: Storage, leases): a lease nobody renews is swept, a
// live (renewed) one is not, and a write carrying a stale fencing token is refused. A second
// connection to the same file stands for another process.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { closeDb, markInterrupted, openDb } from './client';
import {
  expiredLeases,
  holdsLease,
  LEASE_TTL_MS,
  leaseKeeper,
  LeaseLostError,
  newLease,
  releaseLease,
  renewLease,
  takeOver,
} from './run-lease';
import { runStore } from './run-store';
import * as schema from './schema';
import type { Db } from './types';

const T0 = 1_700_000_000_000;
const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
const opened: { path: string; other: Db }[] = [];

/** This process's connection, and a second one to the same file: "another process". */
function twoProcesses() {
  const path = join(mkdtempSync(join(tmpdir(), 'aqven-lease-')), 'aqven.db');
  const db = openDb(path);
  const other = drizzle(new Database(path), { schema }) as Db;
  opened.push({ path, other });
  return { db, other };
}

afterEach(async () => {
  for (const { path, other } of opened.splice(0)) {
    other.$client.close();
    await closeDb(path);
  }
});

const row = (db: Db, id: string) =>
  db.$client.prepare('SELECT status, owner, fence, heartbeat_at AS heartbeatAt, lease_expires_at AS expiresAt FROM runs WHERE id = ?').get(id) as {
    status: string;
    owner: string;
    fence: number;
    heartbeatAt: number;
    expiresAt: number;
  };

describe('run leases', () => {
  it('a run is inserted with its owner, fence 1, heartbeat and expiry; the keeper renews it', async () => {
    const { db } = twoProcesses();
    await runStore(db).insertRun({ id: 'r', project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease('r', T0, 'me') });
    expect(row(db, 'r')).toEqual({ status: 'running', owner: 'me', fence: 1, heartbeatAt: T0, expiresAt: T0 + LEASE_TTL_MS });
    expect(leaseKeeper(db).tick(T0 + 5_000)).toEqual([]);
    expect(row(db, 'r')).toMatchObject({ heartbeatAt: T0 + 5_000, expiresAt: T0 + 5_000 + LEASE_TTL_MS });
  });

  it('a lease not renewed is swept; a live run, renewed by its keeper, is not', async () => {
    const { db, other } = twoProcesses();
    const s = runStore(db);
    await s.insertRun({ id: 'live', project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease('live', T0) });
    await s.insertRun({ id: 'dead', project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease('dead', T0) });
    s.insertNode({ id: 'dead-n', runId: 'dead', nodeId: 'n', agent: 'a', turn: 1, status: 'running', policy: null, startedAt: T0 });
    s.flush();
    leaseKeeper(db).drop('dead'); // its owner stops beating: a process that died

    // before expiry nothing is swept, from anywhere
    expect(markInterrupted(other, T0 + LEASE_TTL_MS - 1)).toBe(0);
    leaseKeeper(db).tick(T0 + 15_000); // the live run's heartbeat
    // past the dead run's expiry, another process's sweep takes the dead run only
    expect(expiredLeases(other, T0 + LEASE_TTL_MS + 1).map((r) => r.runId)).toEqual(['dead']);
    expect(markInterrupted(other, T0 + LEASE_TTL_MS + 1)).toBe(1);
    expect(row(db, 'dead')).toMatchObject({ status: 'interrupted', fence: 2 }); // the sweep bumps the fence
    expect(row(db, 'live')).toMatchObject({ status: 'running', fence: 1 });
    expect((db.$client.prepare(`SELECT status, error_code AS code FROM node_runs WHERE id = 'dead-n'`).get() as object)).toEqual({ status: 'failed', code: 'interrupted' });
    // the live run's own process never sweeps it, even when its beats are late
    expect(markInterrupted(db, T0 + 10 * LEASE_TTL_MS)).toBe(0);
  });

  it('a write with a stale fencing token is refused, and the run is told', async () => {
    const { db, other } = twoProcesses();
    const s = runStore(db);
    const lost: Error[] = [];
    await s.insertRun({ id: 'r', project: 'p', flow: 'f', input: {}, startedAt: T0, lease: newLease('r', T0), onLost: (e) => lost.push(e) });
    // the lease expires unrenewed (a frozen process) and a worker takes the run over
    const theirs = takeOver(other, { runId: 'r', fence: 1 }, T0 + LEASE_TTL_MS + 1, 'worker-2');
    expect(theirs).toEqual({ runId: 'r', owner: 'worker-2', fence: 2, expiresAt: T0 + 2 * LEASE_TTL_MS + 1 });
    // the old owner wakes up and writes with its stale token: refused, nothing written
    s.insertNode({ id: 'late-n', runId: 'r', nodeId: 'n', agent: 'a', turn: 1, status: 'running', policy: null, startedAt: T0 });
    const finished = s.finishRun({ id: 'r', status: 'succeeded', output: { x: 1 }, error: null, turns: 1, usage, finishedAt: T0 + 1 });
    await expect(finished).rejects.toBeInstanceOf(LeaseLostError);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    expect(lost[0]!.message).toMatch(/^run r lost its lease on .*aqven\.db/);
    expect(row(db, 'r')).toMatchObject({ status: 'running', owner: 'worker-2', fence: 2 });
    expect(db.$client.prepare(`SELECT count(*) AS n FROM node_runs`).get()).toEqual({ n: 0 });
    // and its heartbeat cannot revive the old lease
    expect(renewLease(db, newLease('r', T0), T0 + LEASE_TTL_MS + 2)).toBe(false);
    expect(holdsLease(other, theirs!)).toBe(true);
  });

  it('take-over is a compare-and-set: refused while the lease is live or after someone else took it; a released lease is free at once', async () => {
    const { db, other } = twoProcesses();
    const lease = newLease('r', T0);
    await runStore(db).insertRun({ id: 'r', project: 'p', flow: 'f', input: {}, startedAt: T0, lease });
    expect(takeOver(other, { runId: 'r', fence: 1 }, T0 + 1_000, 'w2')).toBeNull(); // live
    expect(releaseLease(db, lease, T0 + 1_000)).toBe(true); // handed back without finishing
    expect(takeOver(other, { runId: 'r', fence: 1 }, T0 + 1_000, 'w2')).toMatchObject({ owner: 'w2', fence: 2 });
    expect(takeOver(other, { runId: 'r', fence: 1 }, T0 + 100 * LEASE_TTL_MS, 'w3')).toBeNull(); // stale fence
  });
});
