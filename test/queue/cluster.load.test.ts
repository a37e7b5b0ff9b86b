// [big] A cluster of real `aqven worker` processes on one PostgreSQL (DESIGN: Storage, "Workers and
// the queue"): hundreds of queued runs under the showcase's chaos profile, played by one simulator
// the workers share (AQVEN_SIM_URL), finish exactly once; a worker killed mid-run leaves nothing
// behind — its runs finish on the others, no node's output twice. The slowest file of the suite
// (about a minute); the bounds are hang guards, the wall times are printed.
import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/db/client';
import type { PgDb } from '@/db/types';
import { openSession, type Session } from '@/lib/flow/session';
import { enqueueRun } from '@/lib/flow/enqueue';
import { startSimulator } from '@/lib/sim';
import { ensureCliBuilt } from '../cli/aqven-process';
import { testDatabase } from '../helpers/pg-cluster';
import { copyShowcase } from '../helpers/showcase';
import { eventually, lockTrouble, startWorker, unfinished, type WorkerProcess } from './workers';

const RUNS = 300;
const WORKERS = 3;
const CONCURRENCY = 8;

/** A fresh database with the showcase pushed, a simulator playing `sim`'s options, and a session to enqueue with. */
async function cluster(simOptions: Parameters<typeof startSimulator>[0]) {
  // an empty database the session migrates: on a copy of the run's template the killed-worker test
  // timed out waiting for the victim to hold running runs (2 of 2 tries; the cause is not known yet)
  const tdb = await testDatabase();
  const dir = copyShowcase();
  const session = await openSession(dir, { env: { AQVEN_DATABASE_URL: tdb.url } });
  const db = session.db as PgDb;
  const sim = await startSimulator({ logLimit: 100_000, ...simOptions, chaos: simOptions?.chaos ?? chaosOf(session) });
  return { tdb, dir, session, db, sim };
}

const chaosOf = (s: Session) => ({ ...s.project.simulate.chaos, seed: s.project.simulate.seed });

async function enqueueMany(s: Session, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await enqueueRun({ db: s.db as PgDb, project: s.project, snapshotId: s.snapshotId, flow: 'triage', input: { ticket: `ticket ${i}: my invoice is wrong` } }));
  }
  return ids;
}

/** (run, node) pairs recorded more than once, and succeeded nodes recorded more than once: what a double run leaves. */
async function duplicates(db: PgDb): Promise<{ nodeRows: number; succeededTwice: number }> {
  const { nodeRuns: n } = db.t;
  const byNode = await db.q
    .select({ runId: n.runId, nodeId: n.nodeId, rows: count() })
    .from(n)
    .groupBy(n.runId, n.nodeId)
    .having(sql`count(*) > 1`);
  const succeeded = await db.q
    .select({ runId: n.runId, nodeId: n.nodeId, rows: count() })
    .from(n)
    .where(eq(n.status, 'succeeded'))
    .groupBy(n.runId, n.nodeId)
    .having(sql`count(*) > 1`);
  return { nodeRows: byNode.length, succeededTwice: succeeded.length };
}

describe('[big] a cluster of workers', () => {
  beforeAll(() => ensureCliBuilt(), 120_000);

  describe(`${RUNS} queued runs, ${WORKERS} workers, the showcase's chaos`, () => {
    let c: Awaited<ReturnType<typeof cluster>>;
    const workers: WorkerProcess[] = [];
    beforeAll(async () => {
      c = await cluster({});
    }, 90_000);
    afterAll(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      await c?.sim.close();
      await c?.session.close();
      if (c) await closeDb(c.tdb.url);
      await c?.tdb.stop();
    });

    it('every run finishes exactly once; every try the simulator saw is recorded; no lock errors', async () => {
      const ids = await enqueueMany(c.session, RUNS);
      const t0 = Date.now();
      for (let i = 0; i < WORKERS; i++) workers.push(await startWorker({ url: c.tdb.url, simUrl: c.sim.url, project: c.dir, concurrency: CONCURRENCY }));
      await eventually(`${RUNS} runs to finish`, async () => (await unfinished(c.db)) === 0, 110_000, 250);
      const wallMs = Date.now() - t0;
      for (const w of workers) w.child.kill('SIGTERM');
      const exits = await Promise.all(workers.map((w) => w.exited));
      expect(exits.map((e) => e.code)).toEqual(workers.map(() => 0));

      const { runs, transportTries } = c.db.t;
      const rows = await c.db.q.select({ id: runs.id, status: runs.status, owner: runs.owner, fence: runs.fence }).from(runs).where(inArray(runs.id, ids));
      expect(rows).toHaveLength(RUNS);
      for (const r of rows) expect(['succeeded', 'failed']).toContain(r.status);
      // one claim each: no run changed hands
      expect(rows.filter((r) => r.fence !== 1)).toEqual([]);

      // one end line per run across the workers, each run once, by the worker that owns it
      const lines = workers.flatMap((w) =>
        w
          .lines()
          .filter((l) => typeof l.runId === 'string' && typeof l.status === 'string')
          .map((l) => ({ w: w.id, l: l.msg })),
      );
      const seen = new Map<string, string>();
      for (const { w, l } of lines) {
        const m = /^run (\S+) triage (succeeded|failed)\b.*: \d+ attempts?, /.exec(l);
        expect(m, l).not.toBeNull();
        expect(seen.has(m![1]!), `run ${m![1]} printed twice`).toBe(false);
        seen.set(m![1]!, w);
      }
      expect(seen.size).toBe(RUNS);
      for (const r of rows) expect(seen.get(r.id)).toBe(r.owner);
      const perWorker = workers.map((w) => lines.filter((x) => x.w === w.id).length);

      expect(await duplicates(c.db)).toEqual({ nodeRows: 0, succeededTwice: 0 });
      const [{ tries }] = (await c.db.q.select({ tries: count() }).from(transportTries)) as [{ tries: number }];
      const requests = c.sim.requests().length;
      expect(tries).toBe(requests);
      const trouble = workers.flatMap((w) => lockTrouble(w.out() + w.err()));
      expect(trouble).toEqual([]);
      const byStatus = rows.reduce<Record<string, number>>((a, r) => ((a[r.status] = (a[r.status] ?? 0) + 1), a), {});
      const pauses = c.sim.requests().filter((q) => q.fault === 'rate_limit').length;
      console.log(
        `[big] ${RUNS} runs on ${WORKERS} workers × ${CONCURRENCY}: ${(wallMs / 1000).toFixed(1)} s wall, ` +
          `${JSON.stringify(byStatus)}, runs per worker ${perWorker.join('/')}, ${requests} requests = ${tries} tries recorded, ${pauses} 429s`,
      );
    }, 150_000);
  });

  describe('a worker killed mid-run', () => {
    let c: Awaited<ReturnType<typeof cluster>>;
    const workers: WorkerProcess[] = [];
    beforeAll(async () => {
      // no chaos, but time: each reply takes a while, so the killed worker has runs in flight
      c = await cluster({ chaos: {}, latency: { first_token_ms: 300, tokens_per_s: 400 } });
    }, 90_000);
    afterAll(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      await c?.sim.close();
      await c?.session.close();
      if (c) await closeDb(c.tdb.url);
      await c?.tdb.stop();
    });

    it('its runs finish on the others, no node output twice', async () => {
      const ids = await enqueueMany(c.session, 40);
      for (let i = 0; i < 3; i++) workers.push(await startWorker({ url: c.tdb.url, simUrl: c.sim.url, project: c.dir, concurrency: 4 }));
      const victim = workers[0]!;
      const { runs } = c.db.t;
      // wait until the victim is in the middle of runs: some with a node finished, some in flight
      const heldBefore = await eventually('the victim to be running runs', async () => {
        const rows = await c.db.q
          .select({ id: runs.id })
          .from(runs)
          .where(and(eq(runs.owner, victim.id), eq(runs.status, 'running')));
        return rows.length >= 2 ? rows.map((r) => r.id) : null;
      });
      const t0 = Date.now();
      victim.child.kill('SIGKILL');
      await victim.exited;
      // what it held when it died: a run it finished between that read and the kill is its own, rightly
      const held = (
        await c.db.q
          .select({ id: runs.id })
          .from(runs)
          .where(and(eq(runs.owner, victim.id), eq(runs.status, 'running')))
      ).map((r) => r.id);
      expect(held.length, `the victim held ${heldBefore.length} runs a moment before it died`).toBeGreaterThan(0);
      await eventually('every run to finish', async () => (await unfinished(c.db)) === 0, 110_000, 250);
      const recoveredMs = Date.now() - t0;

      const rows = await c.db.q.select({ id: runs.id, status: runs.status, owner: runs.owner, fence: runs.fence }).from(runs).where(inArray(runs.id, ids));
      for (const r of rows) expect(['succeeded', 'failed']).toContain(r.status);
      const taken = rows.filter((r) => held.includes(r.id));
      // each run the victim held was taken over by a live worker (fence bumped) and finished there
      for (const r of taken) {
        expect(r.owner).not.toBe(victim.id);
        expect(r.fence).toBeGreaterThan(1);
      }
      expect(await duplicates(c.db)).toEqual({ nodeRows: 0, succeededTwice: 0 });
      // the attempts the victim had in flight were closed by the take-over, none left open
      const { attempts } = c.db.t;
      expect(await c.db.q.select({ id: attempts.id }).from(attempts).where(isNull(attempts.finishedAt))).toEqual([]);
      for (const w of workers.slice(1)) w.child.kill('SIGTERM');
      const exits = await Promise.all(workers.slice(1).map((w) => w.exited));
      expect(exits.map((e) => e.code)).toEqual([0, 0]);
      const trouble = workers.flatMap((w) => lockTrouble(w.out() + w.err()));
      expect(trouble).toEqual([]);
      const takenLines = workers.slice(1).flatMap((w) => w.lines().filter((l) => l.takenOver === true));
      console.log(`[big] killed a worker holding ${held.length} runs: all ${ids.length} finished ${(recoveredMs / 1000).toFixed(1)} s later; ${takenLines.length} taken over`);
    }, 150_000);
  });
});
