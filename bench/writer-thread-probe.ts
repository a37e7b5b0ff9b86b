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
import { Worker } from 'node:worker_threads';
import { v7 } from 'uuid';
import { closeDb, openDb } from '@/db/client';
import { runStore, type RunStore } from '@/db/run-store';
import { LeaseLostError, leaseKeeper } from '@/db/run-lease';
import { adoptReads } from '@/db/run-store/adopt';
import { attemptFacts } from '@/db/run-store/attempt-facts';
import type { Backend } from '@/db/run-store/backends';
import type { StoreContext } from '@/db/run-store/context';
import { runFeeds } from '@/db/run-store/feeds';
import { runFencing } from '@/db/run-store/fencing';
import { nodeFacts } from '@/db/run-store/node-facts';
import { pauseFacts } from '@/db/run-store/pauses';
import { runFacts as runFactsPart } from '@/db/run-store/run-facts';
import { storeStatements } from '@/db/run-store/statements';
import { writeQueue, type Fact } from '@/db/run-store/write-queue';
import type { Db, SqliteDb } from '@/db/types';
import { spread } from './peers/metrics';
import { bundleEntry } from './peers/bundle';
import { runFacts } from './store-facts';
import type { FromWriter, ToWriter } from './writer-thread-worker';

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

/** a backend whose commits a worker thread makes: statements numbered in storeStatements' order, their values posted as they are */
async function workerBackend(db: SqliteDb, onRefused: (runId: string) => void) {
  const worker = new Worker(await bundleEntry(join(import.meta.dirname, 'writer-thread-worker.ts'), 'aqven-bench-writer'), { workerData: { path: db.name } });
  const answers = new Map<number, (m: FromWriter) => void>();
  worker.on('message', (m: FromWriter) => {
    answers.get(m.id)?.(m);
    answers.delete(m.id);
  });
  worker.on('error', (err) => console.error('writer thread:', err));
  let ask = 0;
  const send = <T extends FromWriter>(m: ToWriter & { id: number }) => new Promise<T>((res) => (answers.set(m.id, res as (m: FromWriter) => void), worker.postMessage(m)));
  let batch: unknown[] | null = null;
  let numbered = 0;
  const counts = { commits: 0 };
  const inFlight = new Set<Promise<void>>();
  const state = { run: null as string | null };
  const backend: Backend = {
    prepare: () => {
      const no = numbered++;
      return {
        run: (v) => {
          if (!batch) throw new Error('a run-store statement was queued outside a commit');
          batch.push(no, state.run, v);
        },
      };
    },
    transaction: (_ids, _fence, drain) => {
      const b: unknown[] = (batch = []);
      try {
        drain();
      } finally {
        batch = null;
      }
      counts.commits++;
      const p = send<Extract<FromWriter, { type: 'done' }>>({ type: 'commit', id: ++ask, batch: b }).then((m) => {
        if (m.error) throw new Error(m.error);
        m.refused.forEach(onRefused);
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p)).catch(() => undefined);
      return p;
    },
    afterFailure: () => undefined,
    afterFlush: () => worker.postMessage({ type: 'index' } satisfies ToWriter),
  };
  return {
    backend,
    state,
    counts,
    idle: () => Promise.all([...inFlight]).then(() => undefined),
    cpuNs: async () => (await send<Extract<FromWriter, { type: 'cpu' }>>({ type: 'cpu', id: ++ask })).ns,
    close: async () => {
      worker.postMessage({ type: 'close' } satisfies ToWriter);
      await new Promise((res) => worker.once('exit', res));
    },
  };
}

/** db/run-store.ts's store, composed of the same parts over the worker backend; `grouped`: one commit in flight */
async function workerStore(db: SqliteDb, grouped: boolean) {
  const keeper = leaseKeeper(db);
  const w = await workerBackend(db, (id) => fencing.tell(id, new LeaseLostError(id, db.name)));
  const s = storeStatements(db.q, db.t, w.backend.prepare);
  const feeds = runFeeds(s);
  const adopt = adoptReads(db, feeds);
  const turnsDue = new Map<string, number>();
  const forget = (runId: string) => {
    fencing.sqlite?.forget(runId);
    feeds.forget(runId);
    turnsDue.delete(runId);
    adopt.unread.delete(runId);
  };
  const fencing = runFencing(db, keeper, forget);
  // the fences are checked by the worker, inside its transaction; a run already lost here is not sent
  const drain = (batch: Fact[]) => {
    feeds.begin();
    for (const f of batch) {
      if (f.runId !== null && fencing.lost.has(f.runId)) continue;
      w.state.run = f.runId;
      f.write();
    }
    w.state.run = null;
    feeds.end();
  };
  // the write queue's PostgreSQL path commits one at a time, in order: what arrives meanwhile shares the next
  const queueDb = (grouped ? { ...db, dialect: 'pg' } : db) as Db;
  const queue = writeQueue(queueDb, w.backend, fencing, drain, async () => new Map());
  const ctx: StoreContext = { db, s, keeper, fencing, feeds, adopt, queue, turnsDue, forget };
  const store: RunStore = {
    ...pauseFacts(ctx),
    ...runFactsPart(ctx),
    ...nodeFacts(ctx),
    ...attemptFacts(ctx),
    flush: () =>
      queue
        .commit()
        .then(w.idle)
        .then(() => w.backend.afterFlush()),
  };
  return { store, commits: () => w.counts.commits, writerNs: w.cpuNs, close: w.close };
}

/** the product's store, its commits counted (it commits with `transaction(drain).immediate()`) */
function inThreadStore(db: SqliteDb) {
  let commits = 0;
  const c = db.$client as unknown as { transaction: (fn: (...a: unknown[]) => unknown) => { immediate: (...a: unknown[]) => unknown } };
  const orig = c.transaction.bind(c);
  c.transaction = (fn) => {
    const tx = orig(fn);
    return Object.assign((...a: unknown[]) => (tx as unknown as (...b: unknown[]) => unknown)(...a), { ...tx, immediate: (...a: unknown[]) => (commits++, tx.immediate(...a)) });
  };
  return { store: runStore(db), commits: () => commits, writerNs: async () => 0, close: async () => undefined };
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
