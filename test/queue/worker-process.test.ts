// `aqven run --queue`, `aqven worker` and `aqven cancel` as a user meets them (DESIGN: CLI; Storage,
// "Workers and the queue"): a real PostgreSQL, the simulator on loopback shared by the workers
// through AQVEN_SIM_URL. The workers are the real bin (signals, draining); queueing, cancelling and
// the refusals are the command line run in this process (aqvenHere).
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { startSimulator, type SimServer } from '@/lib/sim';
import { aqvenHere, ensureCliBuilt } from '../cli/aqven-process';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { copyShowcase } from '../helpers/showcase';
import { eventually, lockTrouble, startWorker, unfinished } from './workers';

describe('aqven run --queue, aqven worker, aqven cancel', () => {
  let tdb: TestDatabase;
  let db: Db;
  let sim: SimServer;
  let dir: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    ensureCliBuilt();
    tdb = await testDatabase({ migrated: true });
    db = await openDatabase(tdb.url);
    sim = await startSimulator({});
    dir = copyShowcase();
    env = { AQVEN_DATABASE_URL: tdb.url, AQVEN_SIM_URL: sim.url };
  }, 120_000);
  afterAll(async () => {
    await sim?.close();
    await closeDb(tdb.url);
    await tdb?.stop();
  });

  /** the command line in this process; it closes the database when it ends (the pool this process shares with it): opened again for the test's reads */
  const aqven = async (args: string[], e: Record<string, string | undefined>) => {
    const res = await aqvenHere(args, e);
    db = await openDatabase(tdb.url);
    return res;
  };
  const queue = (input: string, extra: string[] = []) => aqven(['run', 'triage', '--queue', '--project', dir, '--input', input, ...extra], env);
  const row = async (id: string) => (await db.q.select().from(db.t.runs).where(eq(db.t.runs.id, id)))[0];

  it('--queue refuses bad input and a SQLite project, and prints the id of a queued run', async () => {
    const bad = await queue('{"ticket": 7}');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/input\.ticket/);
    const sqlite = await aqven(['run', 'triage', '--queue', '--project', dir], { AQVEN_DATABASE_URL: undefined });
    expect(sqlite).toMatchObject({ code: 2, out: '' });
    expect(sqlite.err.trim()).toBe('aqven run: --queue needs AQVEN_DATABASE_URL=postgres://…: runs are queued only in PostgreSQL mode');

    const ok = await queue('{"ticket": "My invoice is wrong"}', ['--json']);
    expect(ok.code).toBe(0);
    const { id, status } = JSON.parse(ok.out) as { id: string; status: string };
    expect(status).toBe('queued');
    expect(await row(id)).toMatchObject({ status: 'queued', flow: 'triage' });
    expect(await db.q.select().from(db.t.runs)).toHaveLength(1); // the bad input queued nothing
  });

  it('cancel: a queued run is cancelled once; anything else is left alone, with its status', async () => {
    const id = /^run (\S+) queued$/.exec((await queue('{"ticket": "cancel me"}')).out.trim())![1]!;
    const first = await aqven(['cancel', id], env);
    expect(first).toMatchObject({ code: 0, out: `run ${id} cancelled\n` });
    expect(await row(id)).toMatchObject({ status: 'cancelled' });
    const again = await aqven(['cancel', id], env);
    expect(again.code).toBe(1);
    expect(again.err.trim()).toBe(`aqven cancel: run ${id} is cancelled, not queued: not cancelled`);
    expect(await aqven(['cancel', 'no-such-run'], env)).toMatchObject({ code: 1, err: 'aqven cancel: no run with id no-such-run\n' });
    const sqlite = await aqven(['cancel', id], { AQVEN_DATABASE_URL: undefined });
    expect(sqlite.code).toBe(1);
    expect(sqlite.err).toMatch(/^aqven cancel: nothing is queued in SQLite mode/);
  });

  it('a worker runs the queued run, logs its claim, start and end, and drains on SIGTERM (exit 0)', async () => {
    const [queued] = await db.q.select().from(db.t.runs).where(eq(db.t.runs.status, 'queued'));
    const w = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 2 });
    await eventually('the run to finish', async () => (await unfinished(db)) === 0);
    const done = (await row(queued!.id))!;
    expect(['succeeded', 'failed']).toContain(done.status);
    expect(done.owner).toBe(w.id);
    expect(done.fence).toBe(1);
    // the providers went to the test's simulator, not to one of the worker's own
    expect(sim.requests().length).toBeGreaterThan(0);
    const workers = await db.q.select().from(db.t.workers).where(eq(db.t.workers.id, w.id));
    expect(workers[0]).toMatchObject({ concurrency: 2, stoppedAt: null });

    w.child.kill('SIGTERM');
    const exit = await w.exited;
    expect(exit.code).toBe(0);
    // every line of stdout is a JSON log line; the run's are said once each, with its id
    const lines = w.lines();
    const ofRun = lines.filter((l) => l.runId === queued!.id).map((l) => l.msg);
    expect(ofRun[0]).toBe(`run ${queued!.id} triage claimed`);
    expect(ofRun[1]).toBe(`run ${queued!.id} triage started`);
    expect(ofRun.at(-1)).toMatch(new RegExp(`^run ${queued!.id} triage ${done.status}\\b.*: \\d+ attempts?, \\d+(\\.\\d)? m?s, \\$`));
    expect(ofRun.filter((m) => m.startsWith(`run ${queued!.id} triage ${done.status}`))).toHaveLength(1);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['SIGTERM: draining — no new runs', 'stopped: 0 finished while draining, 0 handed back']));
    for (const l of lines) expect(l).toMatchObject({ name: 'aqven worker', worker: w.id });
    expect(w.err()).toBe('');
    expect(lockTrouble(w.out() + w.err())).toEqual([]);
    const [stopped] = await db.q.select().from(db.t.workers).where(eq(db.t.workers.id, w.id));
    expect(stopped!.stoppedAt).toBeGreaterThan(0);
  });

  it('drain: runs still going when the drain time is up are handed back, and another worker finishes them', async () => {
    // a slow provider: the runs are in flight when the worker is stopped
    const slow = await startSimulator({ latency: { first_token_ms: 1500, tokens_per_s: 1000 } });
    try {
      const ids: string[] = [];
      for (const i of [1, 2, 3]) ids.push(/^run (\S+) queued$/.exec((await queue(`{"ticket": "slow ${i}"}`)).out.trim())![1]!);
      const a = await startWorker({ url: tdb.url, simUrl: slow.url, project: dir, concurrency: 3, drainTimeout: 0.2 });
      const { runs, attempts } = db.t;
      await eventually('worker A to run the three runs', async () => {
        const held = await db.q
          .select({ id: runs.id })
          .from(runs)
          .where(and(eq(runs.owner, a.id), eq(runs.status, 'running')));
        return held.length === 3;
      });
      a.child.kill('SIGTERM');
      expect((await a.exited).code).toBe(0);
      const back = a.lines().filter((l) => l.status === 'handed back');
      expect(back.map((l) => l.msg.split(' ').slice(0, 5).join(' ')).sort()).toEqual(ids.map((id) => `run ${id} triage handed back`).sort());
      expect(a.lines().map((l) => l.msg)).toContain('stopped: 0 finished while draining, 3 handed back');
      // left running, their leases released: no worker holds them; the attempts cut off are recorded, none open
      const left = await db.q.select().from(runs).where(inArray(runs.id, ids));
      for (const r of left) expect(r.status).toBe('running');
      for (const r of left) expect(r.leaseExpiresAt!).toBeLessThan(Date.now());
      expect(
        await db.q
          .select({ id: attempts.id })
          .from(attempts)
          .where(and(inArray(attempts.runId, ids), isNull(attempts.finishedAt))),
      ).toEqual([]);

      const b = await startWorker({ url: tdb.url, simUrl: slow.url, project: dir, concurrency: 3 });
      await eventually('worker B to finish them', async () => (await unfinished(db)) === 0, 60_000);
      for (const r of await db.q.select().from(runs).where(inArray(runs.id, ids))) {
        expect(['succeeded', 'failed']).toContain(r.status);
        expect(r.owner).toBe(b.id);
        expect(r.fence).toBe(2);
      }
      b.child.kill('SIGTERM');
      expect((await b.exited).code).toBe(0);
      // B says it took each over, then each run's end says how long since the run started (what its page shows: A's part too)
      expect(
        b
          .lines()
          .filter((l) => l.takenOver === true)
          .map((l) => l.runId)
          .sort(),
      ).toEqual([...ids].sort());
      const ended = b.lines().filter((l) => l.resumed === true && typeof l.status === 'string');
      expect(ended.map((l) => l.runId).sort()).toEqual([...ids].sort());
      for (const l of ended) expect(l.msg).toMatch(/ attempts?, \S+ m?s since it started \(taken over\), /);
      expect(lockTrouble(a.out() + a.err() + b.out() + b.err())).toEqual([]);
    } finally {
      await slow.close();
    }
  }, 90_000);

  it('without PostgreSQL, aqven worker says so (exit 2)', async () => {
    const res = await aqven(['worker', '--project', dir], { AQVEN_DATABASE_URL: undefined });
    expect(res.code).toBe(2);
    expect(res.err.trim()).toMatch(/^aqven worker: needs AQVEN_DATABASE_URL=postgres:\/\//);
    const simUrl = await aqven(['worker', '--simulate', '--project', dir], { ...env, AQVEN_SIM_URL: 'localhost:4010' });
    expect(simUrl.code).toBe(2);
    expect(simUrl.err).toMatch(/AQVEN_SIM_URL must be the http:\/\/ URL/);
  });
});
