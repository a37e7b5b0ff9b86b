// The run store with its SQLite writer on a worker thread — a prototype for measurements, not the
// product's: db/run-store.ts's parts (facts, feeds, fencing, the write queue) over a backend that
// posts each commit's statements — (statement number, run id, values by name, as
// db/run-store/statements.ts binds them) — to a worker thread owning the write connection
// (bench/writer-thread-worker.ts). The worker checks each run's fence inside its transaction, as
// the SQLite store does, commits and answers; a durable fact's promise resolves on that answer.
// `grouped`: one commit in flight at a time, what arrives meanwhile shares the next (the write
// queue's PostgreSQL path); else each event-loop turn's durable facts are posted at once.
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LeaseLostError, leaseKeeper } from '@/db/run-lease';
import type { RunStore } from '@/db/run-store';
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
import { bundleEntry, ROOT } from './peers/bundle';
import type { FromWriter, ToWriter } from './writer-thread-worker';

/** this folder (bench/): the worker's source is bundled from here */
const BENCH = join(ROOT, 'bench');

/** a backend whose commits a worker thread makes: statements numbered in storeStatements' order, their values posted as they are */
async function workerBackend(db: SqliteDb, onRefused: (runId: string) => void) {
  const worker = new Worker(await bundleEntry(join(BENCH, 'writer-thread-worker.ts'), 'aqven-bench-writer'), { workerData: { path: db.name } });
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
export async function workerStore(db: SqliteDb, grouped: boolean) {
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
