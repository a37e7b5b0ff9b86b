// Scale-out on PostgreSQL (DESIGN: Storage, "Workers and the queue"): the same queued workload —
// single-node runs against one simulator with zero latency — processed by 1, 2 and 4 `aqven worker`
// processes on one throwaway PostgreSQL, each worker at the default concurrency; and, for
// comparison, the same runs in one process on SQLite at the same concurrency. Also the queue's
// added latency per run: from enqueue to the run's first provider request (the first attempt's
// start), one run at a time with an idle worker waiting.
//
// Everything shares this machine: the PostgreSQL server, the workers, the simulator and the bench
// process itself. The figures say what one machine does, and the result records its core count.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { and, count, inArray, max, min } from 'drizzle-orm';
import pg from 'pg';
import { closeDatabase, openDb } from '@/db/client';
import type { PgDb } from '@/db/types';
import { runFlow } from '@/lib/flow/run-flow';
import { openSession } from '@/lib/flow/session';
import { routeToSimulator } from '@/lib/flow/simulate';
import { loadProject } from '@/lib/project';
import { enqueueRun } from '@/lib/flow/enqueue';
import { startSimulator } from '@/lib/sim';
import { startPgCluster } from '../test/helpers/pg-cluster';
import { oneNodeProject } from './one-node-project';
import { writeResult } from './write-result';

const FINAL = ['succeeded', 'failed', 'interrupted', 'cancelled'] as const;
const INPUT = { ticket: 'I was charged twice' };
const CONCURRENCY = 4;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

function startWorkers(n: number, env: NodeJS.ProcessEnv, dir: string): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn(process.execPath, ['bin/aqven.mjs', 'worker', '--simulate', '--project', dir, '--concurrency', String(CONCURRENCY)], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
}

async function stopWorkers(ws: ChildProcess[]): Promise<void> {
  await Promise.all(
    ws.map(
      (w) =>
        new Promise<void>((done) => {
          if (w.exitCode !== null) return done();
          w.once('exit', () => done());
          w.kill('SIGTERM');
        }),
    ),
  );
}

async function until(what: string, cond: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(50);
  }
}

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** CPU time of a live process from /proc (user + system), ms; null where there is no /proc. */
function processCpuMs(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime (fields 14 and 15)
  } catch {
    return null;
  }
}

/** CPU time of every PostgreSQL process alive now, with what their ended children used (the postmaster's cutime/cstime), ms. */
function postgresCpuMs(): number | null {
  try {
    let ms = 0;
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      if (!stat.includes('(postgres)')) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ms += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
    }
    return ms;
  } catch {
    return null;
  }
}

/** The database's own counters (pg_stat_database: the bench's polling reads included, a few per poll) and its connections now. */
async function dbStats(db: PgDb): Promise<{ commits: number; rowsWritten: number; connections: number }> {
  // the statistics views are PostgreSQL's own, not tables of the schema
  const r = await db.pool.query<{ commits: string; written: string; connections: string }>(
    `SELECT xact_commit AS commits, tup_inserted + tup_updated + tup_deleted AS written, numbackends AS connections
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  const row = r.rows[0]!;
  return { commits: Number(row.commits), rowsWritten: Number(row.written), connections: Number(row.connections) };
}

async function finishedCount(db: PgDb, ids: string[]): Promise<number> {
  const { runs } = db.t;
  let n = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const [row] = await db.q
      .select({ n: count() })
      .from(runs)
      .where(and(inArray(runs.id, ids.slice(i, i + 1000)), inArray(runs.status, [...FINAL])));
    n += row?.n ?? 0;
  }
  return n;
}

export async function runScaleOutBench(opts: { runs?: number; workers?: number[]; latencyRuns?: number } = {}) {
  const total = opts.runs ?? 600;
  const workerCounts = opts.workers ?? [1, 2, 4];
  const latencyRuns = opts.latencyRuns ?? 60;
  // the workers run the built CLI: build it from this checkout
  const built = spawnSync(process.execPath, ['scripts/build-cli.mjs'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('bench: the CLI did not build');

  const dir = mkdtempSync(join(tmpdir(), 'aqven-scale-'));
  for (const [f, text] of Object.entries(oneNodeProject('scale'))) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const cluster = await startPgCluster();
  const sim = await startSimulator();
  const perWorkers: {
    workers: number;
    runs: number;
    seconds: number;
    runsPerSec: number;
    attemptsPerSec: number;
    ratioToOne: number;
    /** committed transactions and rows written in the database per run (pg_stat_database), queue included */
    commitsPerRun: number;
    rowsWrittenPerRun: number;
    /** connections to the database while the workers ran, at the most */
    peakConnections: number;
    /** CPU ms per run while draining the backlog: the workers, the PostgreSQL server, this process (the simulator and the polling) */
    cpuMsPerRun: { workers: number; postgres: number; benchAndSimulator: number } | null;
  }[] = [];
  let latency: { runs: number; medianMs: number; p95Ms: number; maxMs: number } | null = null;
  try {
    for (const n of workerCounts) {
      const url = await freshDatabase(cluster.url, `scale_${n}`);
      const env = { ...process.env, AQVEN_DATABASE_URL: url, AQVEN_SIM_URL: sim.url, CI: '1' };
      // the first snapshot, pushed from the folder (as the workers would)
      const session = await openSession(dir, { env, simulate: false });
      const db = session.db as PgDb;
      // the backlog first, then the workers: the figure is how fast n workers drain it, from the
      // first claim to the last run's end (both timed by the database rows), whatever the enqueue rate
      const ids: string[] = [];
      let made = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (made++ < total) ids.push(await enqueueRun({ db, project: session.project, snapshotId: session.snapshotId, flow: 'one', input: INPUT }));
        }),
      );
      const stats0 = await dbStats(db);
      const pg0 = postgresCpuMs();
      const self0 = process.cpuUsage();
      const workers = startWorkers(n, env, dir);
      let peakConnections = 0;
      try {
        await until(
          `${total} runs to finish`,
          async () => {
            peakConnections = Math.max(peakConnections, (await dbStats(db)).connections);
            return (await finishedCount(db, ids)) === total;
          },
          600_000,
        );
        const workerCpu = workers.reduce((sum, w) => sum + (processCpuMs(w.pid) ?? NaN), 0);
        const pg1 = postgresCpuMs();
        const self = process.cpuUsage(self0);
        await sleep(1_500); // the server publishes its counters about once a second
        const stats1 = await dbStats(db);
        const { runs, attempts } = db.t;
        const [span] = await db.q
          .select({ from: min(runs.startedAt), to: max(runs.finishedAt) })
          .from(runs)
          .where(inArray(runs.id, ids));
        const seconds = (Number(span!.to) - Number(span!.from)) / 1000;
        let attemptCount = 0;
        for (let i = 0; i < ids.length; i += 1000) {
          const [row] = await db.q
            .select({ n: count() })
            .from(attempts)
            .where(inArray(attempts.runId, ids.slice(i, i + 1000)));
          attemptCount += row?.n ?? 0;
        }
        perWorkers.push({
          workers: n,
          runs: total,
          seconds: +seconds.toFixed(2),
          runsPerSec: Math.round(total / seconds),
          attemptsPerSec: Math.round(attemptCount / seconds),
          ratioToOne: 0,
          commitsPerRun: +((stats1.commits - stats0.commits) / total).toFixed(1),
          rowsWrittenPerRun: +((stats1.rowsWritten - stats0.rowsWritten) / total).toFixed(1),
          peakConnections,
          cpuMsPerRun:
            pg0 === null || pg1 === null || Number.isNaN(workerCpu)
              ? null
              : {
                  // the workers' whole life (start-up included, a few hundred ms each), spread over the runs
                  workers: +(workerCpu / total).toFixed(2),
                  postgres: +((pg1 - pg0) / total).toFixed(2),
                  benchAndSimulator: +((self.user + self.system) / 1000 / total).toFixed(2),
                },
        });
        if (n === 1) {
          // the queue's latency: one run at a time, each enqueued once the last has finished, the worker idle
          const one: string[] = [];
          for (let i = 0; i < latencyRuns; i++) {
            const id = await enqueueRun({ db, project: session.project, snapshotId: session.snapshotId, flow: 'one', input: INPUT });
            one.push(id);
            await until('a run to finish', async () => (await finishedCount(db, [id])) === 1, 30_000);
          }
          const queued = await db.q.select({ id: runs.id, at: runs.queuedAt }).from(runs).where(inArray(runs.id, one));
          const first = await db.q.select({ runId: attempts.runId, at: attempts.startedAt, seq: attempts.seq }).from(attempts).where(inArray(attempts.runId, one));
          const firstAt = new Map<string, number>();
          for (const a of first) if (a.seq === 1) firstAt.set(a.runId, a.at);
          const ms = queued.map((r) => firstAt.get(r.id)! - r.at!).filter((x) => Number.isFinite(x));
          latency = { runs: ms.length, medianMs: pct(ms, 50), p95Ms: pct(ms, 95), maxMs: Math.max(...ms) };
        }
      } finally {
        await stopWorkers(workers);
        await session.close();
        await closeDatabase(db);
      }
    }
    const one = perWorkers.find((p) => p.workers === 1)?.runsPerSec ?? perWorkers[0]!.runsPerSec;
    for (const p of perWorkers) p.ratioToOne = +(p.runsPerSec / one).toFixed(2);

    // the same runs in one process on SQLite, at one worker's concurrency
    const { project } = await loadProject(dir, { env: {} });
    if (!project) throw new Error('bench project invalid');
    const { providers, env } = routeToSimulator(project, sim);
    const sqlitePath = join(dir, 'sqlite-compare.db');
    const sdb = openDb(sqlitePath);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < total) await runFlow({ project, flow: 'one', input: INPUT, providers, env, db: sdb });
      }),
    );
    const sqliteSeconds = (performance.now() - t0) / 1000;
    const sqliteAttempts = (sdb.$client.prepare('SELECT count(*) AS n FROM attempts').get() as { n: number }).n;
    await closeDatabase(sdb);

    const result = {
      cpus: cpus().length,
      concurrencyPerWorker: CONCURRENCY,
      workers: perWorkers,
      sqliteInProcess: {
        runs: total,
        concurrency: CONCURRENCY,
        seconds: +sqliteSeconds.toFixed(2),
        runsPerSec: Math.round(total / sqliteSeconds),
        attemptsPerSec: Math.round(sqliteAttempts / sqliteSeconds),
      },
      queueLatency: latency,
    };
    writeResult('scale-out', result);
    return result;
  } finally {
    await sim.close();
    await cluster.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runScaleOutBench().then((r) => console.log(JSON.stringify(r, null, 2)));
}
