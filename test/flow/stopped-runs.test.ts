// Runs stopped before they end (issue 10): by their caller's signal, by a process about to exit,
// by losing their lease. Each is recorded — the attempt in flight closed as interrupted, the run
// interrupted — and no late write of a run that changed hands reaches the database.
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { markInterrupted } from '@/db/client';
import { LEASE_TTL_MS, leaseKeeper, LeaseLostError, takeOver } from '@/db/run-lease';
import * as schema from '@/db/schema';
import type { Db } from '@/db/types';
import { activeRuns, interruptAllNow } from '@/lib/flow/active-runs';
import { beginRun, RunInterruptedError, RunNotRecordedError } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { GPT_OSS, world, type World } from '../helpers/showcase';

async function until(what: string, f: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

/** A run of long-answer whose first request stalls until it is aborted; resolves once it reached the simulator. */
async function stalledRun(signal?: AbortSignal) {
  w = await world({ [GPT_OSS]: [{ kind: 'stall' }] });
  const { project, sim, db } = w;
  const { providers, env } = await import('@/lib/flow/simulate').then((m) => m.routeToSimulator(project, sim));
  const { runId, done } = await beginRun({ project, flow: 'long-answer', input: { question: 'q' }, providers, env, db, signal });
  await until('the request at the simulator', () => sim.requests().length === 1);
  return { runId, done, db };
}

describe('stopped runs', () => {
  it("the caller's signal interrupts the run: the attempt in flight is closed as interrupted, the run ends interrupted", async () => {
    const ac = new AbortController();
    const { runId, done, db } = await stalledRun(ac.signal);
    ac.abort(new RunInterruptedError('stopped by SIGTERM'));
    const record = await done;
    expect(record).toMatchObject({ id: runId, status: 'interrupted', error: { code: 'interrupted', node: 'draft', message: 'the run was stopped by SIGTERM' } });
    const stored = getRunRecord(db, runId)!;
    expect(stored.status).toBe('interrupted');
    expect(stored.nodes[0]).toMatchObject({ id: 'draft', status: 'failed', error: { code: 'interrupted' } });
    expect(stored.nodes[0]!.attempts).toEqual([expect.objectContaining({ seq: 1, outcome: null, error: expect.objectContaining({ message: 'the run was stopped by SIGTERM' }) })]);
    expect(stored.nodes[0]!.attempts[0]!.latencyMs).not.toBeNull(); // closed, with its finish time
    expect(stored.nodes.slice(1).map((n) => n.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(activeRuns()).toEqual([]);
  });

  it('interruptAllNow records a running run interrupted synchronously (a process at its exit)', async () => {
    const { runId, done, db } = await stalledRun();
    expect(activeRuns().map((r) => r.runId)).toEqual([runId]);
    interruptAllNow('stopped: the process exited');
    // written before anything else ran: read back at once
    const row = db.$client.prepare('SELECT status FROM runs WHERE id = ?').get(runId);
    expect(row).toEqual({ status: 'interrupted' });
    expect(getRunRecord(db, runId)!.nodes[0]!.attempts[0]).toMatchObject({ outcome: null, error: { message: 'the run was stopped: the process exited' } });
    expect((await done).status).toBe('interrupted');
  });

  it('a run whose lease is lost stops at once, and its late facts are refused', async () => {
    const { runId, done, db } = await stalledRun();
    // another process takes the run over after its lease expired (the clock injected)
    const other = drizzle(new Database(db.$client.name), { schema }) as Db;
    try {
      expect(takeOver(other, { runId, fence: 1 }, Date.now() + LEASE_TTL_MS + 1, 'worker-2')).not.toBeNull();
      leaseKeeper(db).tick(); // the owner's next heartbeat finds the run gone
      const err = await done.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RunNotRecordedError);
      expect((err as RunNotRecordedError).reason).toBeInstanceOf(LeaseLostError);
      expect((err as RunNotRecordedError).record.status).toBe('interrupted');
      // nothing of the old owner landed after the take-over: the new owner's row is intact
      expect(other.$client.prepare('SELECT status, owner, fence FROM runs WHERE id = ?').get(runId)).toEqual({ status: 'running', owner: 'worker-2', fence: 2 });
      expect(other.$client.prepare('SELECT count(*) AS n FROM attempts WHERE run_id = ? AND finished_at IS NOT NULL').get(runId)).toEqual({ n: 0 });
    } finally {
      other.$client.close();
    }
  });

  it('a live run is not swept by its own process, however late the clock', async () => {
    const { runId, done, db } = await stalledRun();
    expect(markInterrupted(db, Date.now() + 10 * LEASE_TTL_MS)).toBe(0);
    expect(getRunRecord(db, runId)!.status).toBe('running');
    interruptAllNow('stopped by the test');
    await done;
  });
});
