// Write-behind with durable points (DESIGN: Storage, "Durable points"): facts that do not decide
// anything (a run, node or attempt started, a try, streamed text, a node finished) are queued and
// written within FLUSH_MS. A durable fact — a run started, a finished attempt, a finished run — is
// committed with what its run queued before it (and the facts of no run), and the promise it
// returns resolves only then; the engine awaits it before it acts on the attempt. Durable facts
// arriving in the same event-loop turn (concurrent runs) share one commit: every commit costs whole
// WAL pages, so fewer commits is most of the speed. Each queued fact names its run (null: not a
// run's, e.g. a pause), so the transaction can fence it. SQLite commits synchronously, on the
// spot; PostgreSQL one commit at a time, in order — whatever arrives meanwhile shares the next.
import { LeaseLostError } from '../run-lease';
import { asStorageError } from '../storage-error';
import type { Db } from '../types';
import type { Backend, FenceCheck } from './backends';
import type { Fencing } from './fencing';

/** longest a queued fact waits before it is written (streamed text batches, in-flight rows) */
export const FLUSH_MS = 100;

export type Fact = { runId: string | null; write: () => void };
type Waiter = { runId: string | null; resolve: () => void; reject: (err: unknown) => void };

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** How a commit ends: its waiters settled, its refused runs told; rolled back, its runs and waiters told. */
function commitOutcome(path: string, backend: Backend, fencing: Fencing) {
  /** a storage failure has been reported (to a run or a waiter): later ones are not printed again */
  let toldStorage = false;
  const settle = (ws: Waiter[]) => ws.forEach((w) => (w.runId !== null && fencing.lost.has(w.runId) ? w.reject(new LeaseLostError(w.runId, path)) : w.resolve()));
  return {
    settle,
    /** rolled back: what was queued is lost, and its runs are told */
    failed: (raw: unknown, runs: Set<string>, ws: Waiter[]) => {
      const err = asStorageError(raw, path) ?? raw;
      backend.afterFailure();
      // the runs whose facts were lost are told; facts of no run (a pause) concern every run in progress
      const { onLost, leases } = fencing;
      let mine = [...runs].filter((id) => onLost.has(id) || leases.has(id));
      if (!mine.length) mine = [...new Set([...onLost.keys(), ...leases.keys()])];
      for (const id of mine) fencing.tell(id, err instanceof Error ? err : new Error(String(err)));
      // nobody to tell: said here, once, as one line
      if (!ws.length && !mine.length && !toldStorage) console.error(`aqven: could not write queued run facts: ${message(err)}`);
      toldStorage ||= mine.length > 0 || ws.length > 0;
      ws.forEach((w) => w.reject(err));
    },
    committed: (runs: Set<string>, ws: Waiter[]) => {
      for (const id of runs) fencing.inserting.delete(id);
      for (const id of fencing.refused) fencing.tell(id, new LeaseLostError(id, path));
      settle(ws);
    },
  };
}

/**
 * The queue of a store. `drain(batch)` writes a commit's facts inside its transaction (refusing
 * those of runs no longer ours); `before` (PostgreSQL) reads what a commit needs first, its fences
 * last.
 */
export function writeQueue(db: Db, backend: Backend, fencing: Fencing, drain: (batch: Fact[]) => void, before: FenceCheck) {
  let queue: Fact[] = [];
  let timer: NodeJS.Timeout | null = null;
  let waiters: Waiter[] = [];
  let immediate: NodeJS.Immediate | null = null;
  const { settle, failed, committed } = commitOutcome(db.name, backend, fencing);
  /** what a commit takes from the queue: every fact (`all`), or those of the runs with a durable fact in it (`ws`) and of no run */
  const take = (all: boolean, ws: Waiter[]): Fact[] => {
    if (all) {
      const batch = queue;
      queue = [];
      return batch;
    }
    const durableRuns = new Set(ws.map((w) => w.runId));
    const kept: Fact[] = [];
    const batch: Fact[] = [];
    for (const f of queue) (f.runId === null || durableRuns.has(f.runId) ? batch : kept).push(f);
    queue = kept;
    return batch;
  };
  /**
   * Commits what is queued when it starts: every fact (`all`), or — a durable point's commit — the
   * facts of the runs with a durable fact in it and those of no run; the other runs' facts stay
   * queued, to be written with their own durable fact or within FLUSH_MS of the timer armed for
   * them (an attempt started by a run in flight is so mostly written once, whole, at its end).
   * Rejects nobody but the waiters of durable facts.
   */
  const commitOnce = (all: boolean): void | Promise<void> => {
    if (immediate) clearImmediate(immediate);
    immediate = null;
    const ws = waiters;
    waiters = [];
    const batch = take(all, ws);
    if (!queue.length && timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (!batch.length) return settle(ws);
    const runs = new Set(batch.map((f) => f.runId).filter((id): id is string => id !== null));
    fencing.newCommit();
    let pending: void | Promise<void>;
    try {
      pending = backend.transaction([...runs], before, () => drain(batch));
    } catch (raw) {
      return failed(raw, runs, ws);
    }
    if (pending)
      return pending.then(
        () => committed(runs, ws),
        (raw: unknown) => failed(raw, runs, ws),
      );
    committed(runs, ws);
  };
  let tail: Promise<void> = Promise.resolve();
  /** `all`: every queued fact (a flush, the timer, a pause); else a durable point's commit (commitOnce) */
  const commit = (all = true): Promise<void> => {
    if (db.dialect === 'sqlite') {
      commitOnce(all);
      return Promise.resolve();
    }
    if (all && timer) clearTimeout(timer);
    if (all) timer = null;
    if (immediate) clearImmediate(immediate);
    immediate = null;
    tail = tail.then(() => commitOnce(all)).catch((err: unknown) => console.error(`aqven: a commit of run facts failed: ${String(err)}`));
    return tail;
  };
  return {
    commit,
    /** queues a fact of run `runId` (null: of no run), written within FLUSH_MS or with a durable fact */
    later: (runId: string | null, write: () => void) => {
      queue.push({ runId, write });
      // armed even when a durable point's commit is due: that one may leave this fact queued
      if (!timer) {
        timer = setTimeout(() => void commit(), FLUSH_MS);
        timer.unref?.();
      }
    },
    /** a durable fact: `f(...args)` queued, committed in the next turn's commit, which the promise awaits */
    durable:
      <A extends unknown[]>(runIdOf: (...args: A) => string | null, f: (...args: A) => void) =>
      (...args: A): Promise<void> =>
        new Promise((resolve, reject) => {
          const runId = runIdOf(...args);
          queue.push({ runId, write: () => f(...args) });
          waiters.push({ runId, resolve, reject });
          immediate ??= setImmediate(() => void commit(false));
        }),
  };
}

export type WriteQueue = ReturnType<typeof writeQueue>;
