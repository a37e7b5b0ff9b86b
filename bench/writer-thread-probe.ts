// Would the run store's SQLite writer be better on a worker thread? The same facts (bench/store-facts.ts:
// the fact mix of a recorded single-node run, 4 runs at a time as W4 runs its calls) fed to three
// stores in alternating rounds, each over a database file of its own, in this one process:
//   in-thread       the product's store (db/run-store.ts): statements and commits on the main thread
//   worker          the same store parts (facts, feeds, fencing, write queue) with a backend that
//                   posts each commit's statements — (statement number, run id, values by name) —
//                   to a worker thread owning the write connection (bench/writer-thread-worker.ts);
//                   a durable fact's promise resolves once the worker committed it. Commits are
//                   pipelined: each event-loop turn's durable facts are posted at once
//   worker-grouped  the same, one commit in flight at a time: what arrives meanwhile shares the next
//                   (the write queue's PostgreSQL path)
// Between the facts the main thread spends `--engine-us` of CPU per run (a busy loop; 0: the store
// alone), the engine's own work per call as W4 measures it ("engine alone"), and yields once where
// the request would wait for its answer. Per store: runs/s, CPU ms per run on the main thread (its
// /proc schedstat), on the writer thread and in the whole process (every thread: the checkpointer's
// too), commits per run; ratios to in-thread per round, medians over the rounds. Linux only.
//
//   npx tsx bench/writer-thread-probe.ts [--runs 2000] [--rounds 5] [--engine-us 400] [--invalid 0]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { v7 } from 'uuid';
import { closeDb, openDb } from '@/db/client';
import { runStore } from '@/db/run-store';
import type { SqliteDb } from '@/db/types';
import { spread } from './peers/metrics';
import { countCommits, runFacts } from './store-facts';
import { workerStore } from './writer-thread-store';

const { values } = parseArgs({ options: { runs: { type: 'string' }, rounds: { type: 'string' }, 'engine-us': { type: 'string' }, invalid: { type: 'string' } } });
const perRound = Number(values.runs ?? 2000);
const roundCount = Number(values.rounds ?? 5);
const engineUs = Number(values['engine-us'] ?? 400);
const invalid = Number(values.invalid ?? 0);
const CONCURRENCY = 4;

const threadNs = (path: string) => Number(readFileSync(path, 'utf8').split(' ')[0]);
const mainNs = () => threadNs(`/proc/self/task/${process.pid}/schedstat`);
const processMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** the product's store, its commits counted (it commits with `transaction(drain).immediate()`) */
function inThreadStore(db: SqliteDb) {
  const commits = countCommits(db);
  return { store: runStore(db), commits: () => commits.count, writerNs: async () => 0, close: async () => undefined };
}

const burn = (us: number) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};
/** the engine's CPU per run, split as a call spends it: before the run, building the request, handling the answer */
const between = engineUs
  ? async (at: 'run' | 'request' | 'answer') => {
      burn(engineUs * (at === 'run' ? 0.2 : 0.4));
      if (at === 'request') await new Promise((res) => setImmediate(res)); // the request's round trip
    }
  : undefined;

type Store = Awaited<ReturnType<typeof workerStore>>;
const dir = mkdtempSync(join(tmpdir(), 'aqven-writer-'));
const kinds = ['in-thread', 'worker', 'worker-grouped'] as const;
const stores = {} as Record<(typeof kinds)[number], Store & { path: string }>;
for (const k of kinds) {
  const path = join(dir, `${k}.db`);
  const db = openDb(path);
  stores[k] = { ...(k === 'in-thread' ? inThreadStore(db) : await workerStore(db, k === 'worker-grouped')), path };
}

let seq = 0;
async function round(k: (typeof kinds)[number], n: number) {
  const st = stores[k];
  const one = runFacts(st.store, { newId: v7, invalid, between });
  const c0 = st.commits();
  const [m0, w0, p0, t0] = [mainNs(), await st.writerNs(), processMs(), performance.now()];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await one(seq++);
    }),
  );
  await st.store.flush();
  const [m1, w1, p1, t1] = [mainNs(), await st.writerNs(), processMs(), performance.now()];
  return { runsPerSec: n / ((t1 - t0) / 1000), mainMs: (m1 - m0) / 1e6 / n, writerMs: (w1 - w0) / 1e6 / n, processMs: (p1 - p0) / n, commits: (st.commits() - c0) / n };
}

for (const k of kinds) await round(k, 500); // warm: code compiled, tables past their first pages
const per: Record<string, Awaited<ReturnType<typeof round>>[]> = {};
for (let r = 0; r < roundCount; r++) {
  for (let i = 0; i < kinds.length; i++) {
    const k = kinds[(i + r) % kinds.length]!;
    (per[k] ??= []).push(await round(k, perRound));
  }
}
const med = (xs: number[]) => +spread(xs).median.toFixed(4);
const out: Record<string, unknown> = { runsPerRound: perRound, rounds: roundCount, engineUs, invalid, concurrency: CONCURRENCY };
for (const k of kinds) {
  const xs = per[k]!;
  const base = per['in-thread']!;
  out[k] = {
    runsPerSec: Math.round(spread(xs.map((x) => x.runsPerSec)).median),
    runsPerSecVsInThread: med(xs.map((x, i) => x.runsPerSec / base[i]!.runsPerSec)),
    runsPerSecVsInThreadRange: [med([Math.min(...xs.map((x, i) => x.runsPerSec / base[i]!.runsPerSec))]), med([Math.max(...xs.map((x, i) => x.runsPerSec / base[i]!.runsPerSec))])],
    mainCpuMsPerRun: med(xs.map((x) => x.mainMs)),
    writerCpuMsPerRun: med(xs.map((x) => x.writerMs)),
    processCpuMsPerRun: med(xs.map((x) => x.processMs)),
    processCpuVsInThread: med(xs.map((x, i) => x.processMs / base[i]!.processMs)),
    commitsPerRun: med(xs.map((x) => x.commits)),
  };
}
console.log(JSON.stringify(out));
for (const k of kinds) {
  await stores[k].close();
  await closeDb(stores[k].path);
}
rmSync(dir, { recursive: true, force: true });
