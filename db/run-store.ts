// Writes of a run as it happens (DESIGN: Storage). A finished attempt, a finished run and a
// rate-limit pause are each committed synchronously (with everything queued before them) before
// the engine acts on them; the other facts follow within FLUSH_MS. Prepared statements are made
// once per connection: this is the hot path of every attempt.
//
// Fencing (DESIGN: Storage, leases): a run's row is inserted with this process's lease, and every
// write transaction checks, once per run it touches, that the run's owner and fence are still
// ours; the facts of a run that changed hands (swept as dead, taken over) are refused, not
// written, and the run is told (onLost), as it is when its facts cannot be written at all.
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { AttemptRecord, NodePolicy, PauseOrigin, TryRecord, UsageTotals } from '@/lib/engine/types';
import { holdsLease, LEASE_TTL_MS, leaseKeeper, LeaseLostError, newLease, type Lease } from './run-lease';
import { asStorageError } from './storage-error';
import { capFailureText, redact } from '@/lib/redact';
import { attempts, nodeRuns, rateLimitPauses, runs, streamChunks, transportTries } from './schema';
import { excluded, placeholders, valueStatement, writeStatement } from './typed-sql';
import type { Db, RunError } from './types';

export interface RunStore {
  /**
   * The run's first write, with its lease (default: this process's, from the wall clock); resolves
   * once committed — a run is never started (no provider called) before it can be recorded. From
   * then on the lease is renewed, and `onLost` hears when the run's facts are refused (its lease
   * was lost: LeaseLostError) or cannot be written (StorageError).
   */
  insertRun(r: { id: string; project: string; flow: string; input: unknown; startedAt: number; lease?: Lease; onLost?: (err: Error) => void }): Promise<void>;
  /** resolves once committed; the run's lease is released */
  finishRun(r: {
    id: string;
    status: 'succeeded' | 'failed' | 'interrupted';
    output: unknown;
    error: RunError | null;
    turns: number;
    usage: UsageTotals;
    finishedAt: number;
  }): Promise<void>;
  setRunTurns(id: string, turns: number): void;
  insertNode(n: { id: string; runId: string; nodeId: string; agent: string; turn: number; status: 'running' | 'skipped'; policy: NodePolicy | null; startedAt: number | null }): void;
  finishNode(n: {
    id: string;
    status: 'succeeded' | 'failed';
    output: unknown;
    error: { code: string; message: string; hint: string } | null;
    usage: UsageTotals;
    finishedAt: number;
  }): void;
  startAttempt(a: { id: string; nodeRunId: string; runId: string; seq: number; model: string; chainIndex: number; answerNo: number; request: unknown; startedAt: number }): void;
  /** a batch of an attempt's streamed text, already redacted (DESIGN: Streaming): one stream_chunks row */
  appendStreamed(attemptId: string, text: string): void;
  /** a transport re-try mid-stream: the attempt's text starts afresh (the broken try keeps its own) */
  resetStreamed(attemptId: string): void;
  insertTry(attemptId: string, t: TryRecord): void;
  /** `request` is rewritten only when `requestChanged` (a written start row already holds it) */
  finishAttempt(attemptId: string, a: AttemptRecord, requestChanged?: boolean): Promise<void>;
  /**
   * An attempt in flight when its run was stopped (a signal, a lost lease): closed with no outcome,
   * the reason, its streamed text (redacted by the caller) and the usage the provider had reported
   * (`usageUnknown`: it may have billed more); resolves once committed.
   */
  interruptAttempt(attemptId: string, a: { message: string; streamedText: string | null; usage: UsageTotals; usageUnknown: boolean; finishedAt: number }): Promise<void>;
  /** a later pause wins, and brings its origin; an earlier or equal one changes nothing */
  setPause(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin): void;
  getPause(model: string): number | null;
  /** commits every queued fact now (and settles the durable facts waiting for it) */
  flush(): void;
}

/** longest a queued fact waits before it is written (streamed text batches, in-flight rows) */
export const FLUSH_MS = 100;

const cache = new WeakMap<Db, RunStore>();

/** Writes what the store of `db` has queued, if it has a store. */
export function flushRunStore(db: Db): void {
  cache.get(db)?.flush();
}

export function runStore(db: Db): RunStore {
  const hit = cache.get(db);
  if (hit) return hit;
  const c = db.$client;
  // Typed statements over db/schema.ts (a renamed or removed column is a type error), prepared once
  // for this connection and run synchronously; each value is a placeholder named after its column.
  // They are bound by db/typed-sql.ts (drizzle's SQL, a binding planned once): run(...) takes the
  // values in the order the statement's columns are listed below.
  const P = sql.placeholder;
  const w = <const K extends readonly string[]>(q: Parameters<typeof writeStatement>[1], order: K) => writeStatement(c, q, order);
  const attemptStart = ['id', 'nodeRunId', 'runId', 'seq', 'model', 'chainIndex', 'answerNo', 'request', 'startedAt'] as const;
  const attemptResult = [
    'outcome',
    'finishReason',
    'nativeFinishReason',
    'finishNote',
    'cause',
    'action',
    'responseText',
    'errorKind',
    'errorMessage',
    'errorDetail',
    'validationErrors',
    'discarded',
    'streamedText',
    'inputTokens',
    'outputTokens',
    'costUsd',
    'usageUnknown',
    'finishedAt',
  ] as const;
  // the columns each statement writes, in the order its run() takes them (the id of an update last)
  const runStart = ['id', 'project', 'flow', 'input', 'pid', 'owner', 'fence', 'heartbeatAt', 'leaseExpiresAt', 'startedAt'] as const;
  const runEnd = ['status', 'output', 'errorCode', 'errorNode', 'errorMessage', 'errorHint', 'turns', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
  const attemptCut = ['errorMessage', 'streamedText', 'inputTokens', 'outputTokens', 'costUsd', 'usageUnknown', 'finishedAt'] as const;
  const nodeStart = ['id', 'runId', 'nodeId', 'agent', 'turn', 'status', 'policy', 'startedAt', 'finishedAt'] as const;
  const nodeEnd = ['status', 'output', 'errorCode', 'errorMessage', 'hint', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
  const chunk = ['attemptId', 'seq', 'text'] as const;
  const tryRow = ['attemptId', 'tryNo', 'status', 'error', 'retryAfterMs', 'waitedMs', 'discardedText', 'startedAt', 'finishedAt'] as const;
  const pause = ['model', 'pausedUntil', 'reason', 'setAt', 'serverWait', 'askedMs', 'maxWaitMs'] as const;
  const s = {
    insertRun: w(db.insert(runs).values({ ...placeholders(runs, runStart), status: 'running' }), runStart),
    finishRun: w(db.update(runs).set(placeholders(runs, runEnd)).where(eq(runs.id, P('id'))), [...runEnd, 'id']),
    setRunTurns: w(db.update(runs).set(placeholders(runs, ['turns'])).where(eq(runs.id, P('id'))), ['turns', 'id']),
    interruptAttempt: w(
      db
        .update(attempts)
        .set({ ...placeholders(attempts, attemptCut), errorKind: 'transport', discarded: true })
        .where(and(eq(attempts.id, P('id')), isNull(attempts.outcome))),
      [...attemptCut, 'id'],
    ),
    insertNode: w(db.insert(nodeRuns).values(placeholders(nodeRuns, nodeStart)), nodeStart),
    finishNode: w(db.update(nodeRuns).set(placeholders(nodeRuns, nodeEnd)).where(eq(nodeRuns.id, P('id'))), [...nodeEnd, 'id']),
    startAttempt: w(db.insert(attempts).values(placeholders(attempts, attemptStart)), attemptStart),
    insertAttempt: w(db.insert(attempts).values(placeholders(attempts, [...attemptStart, ...attemptResult])), [...attemptStart, ...attemptResult]),
    // one row per batch: appending costs the batch, not the text so far (`streamed_text || ?` copied
    // the whole text on every batch: quadratic). Joined on read; gone when the attempt finishes.
    appendStreamed: w(db.insert(streamChunks).values(placeholders(streamChunks, chunk)), chunk),
    dropChunks: w(db.delete(streamChunks).where(eq(streamChunks.attemptId, P('attemptId'))), ['attemptId']),
    insertTry: w(db.insert(transportTries).values(placeholders(transportTries, tryRow)), tryRow),
    // `request` is rewritten only when one is given (undefined: NULL, and the stored one is kept)
    finishAttempt: w(
      db
        .update(attempts)
        .set({ ...placeholders(attempts, attemptResult), request: sql`coalesce(${placeholders(attempts, ['request']).request}, ${attempts.request})` })
        .where(eq(attempts.id, P('id'))),
      [...attemptResult, 'request', 'id'],
    ),
    // a later pause wins: the row is replaced only by a pause that ends later
    setPause: w(
      db
        .insert(rateLimitPauses)
        .values(placeholders(rateLimitPauses, pause))
        .onConflictDoUpdate({
          target: rateLimitPauses.model,
          set: {
            pausedUntil: excluded(rateLimitPauses.pausedUntil),
            reason: excluded(rateLimitPauses.reason),
            setAt: excluded(rateLimitPauses.setAt),
            serverWait: excluded(rateLimitPauses.serverWait),
            askedMs: excluded(rateLimitPauses.askedMs),
            maxWaitMs: excluded(rateLimitPauses.maxWaitMs),
          },
          setWhere: sql`${excluded(rateLimitPauses.pausedUntil)} > ${rateLimitPauses.pausedUntil}`,
        }),
      pause,
    ),
    getPause: valueStatement(c, db.select({ until: rateLimitPauses.pausedUntil }).from(rateLimitPauses).where(eq(rateLimitPauses.model, P('model'))), ['model']),
  };
  const insertTry = (attemptId: string, t: TryRecord) =>
    s.insertTry.run(attemptId, t.tryNo, t.status, t.error, t.retryAfterMs, t.waitedMs, t.discardedText ?? null, t.startedAt, t.finishedAt);

  // Write-behind with durable points: facts that do not decide anything (a run, node or attempt
  // started, a try, streamed text, a node finished) are queued and written within FLUSH_MS.
  // A durable fact — a finished attempt, a finished run — is committed with everything queued
  // before it, and the promise it returns resolves only then; the engine awaits it before it acts
  // on the attempt. Durable facts arriving in the same event-loop turn (concurrent runs) share one
  // commit: every commit costs whole WAL pages, so fewer commits is most of the speed.
  // Each queued fact names its run (null: not a run's, e.g. a pause), so the transaction can fence it.
  type Fact = { runId: string | null; write: () => void };
  type Waiter = { runId: string | null; resolve: () => void; reject: (err: unknown) => void };
  let queue: Fact[] = [];
  let timer: NodeJS.Timeout | null = null;
  let waiters: Waiter[] = [];
  let immediate: NodeJS.Immediate | null = null;
  const keeper = leaseKeeper(db);
  const path = c.name;
  /** the lease each run of this store was started with, while it runs */
  const leases = new Map<string, Lease>();
  /** who hears that a run's facts were refused or could not be written */
  const onLost = new Map<string, (err: Error) => void>();
  /** the run of each node run in progress (finishNode names only the node run) */
  const runOfNode = new Map<string, string>();
  /** a storage failure has been reported (to a run or a waiter): later ones are not printed again */
  let toldStorage = false;
  /** runs whose lease was lost: nothing more of theirs is written */
  const lost = new Set<string>();
  // per transaction: runs whose fence was checked (true = still ours), and runs refused
  let fenced = new Map<string, boolean>();
  let refused = new Set<string>();
  const ours = (runId: string): boolean => {
    let ok = fenced.get(runId);
    if (ok === undefined) {
      const lease = leases.get(runId);
      ok = !lost.has(runId) && (!lease || holdsLease(db, lease));
      fenced.set(runId, ok);
    }
    return ok;
  };
  const drain = () => {
    const q = queue;
    queue = [];
    for (const f of q) {
      if (f.runId !== null && !ours(f.runId)) refused.add(f.runId);
      else f.write();
    }
  };
  const flushNow = c.transaction(drain);
  /** tells a run its facts were refused (the lease is gone: stop renewing) or could not be written (kept: it may still finish) */
  const tell = (runId: string, err: Error) => {
    const f = onLost.get(runId);
    onLost.delete(runId);
    if (err instanceof LeaseLostError) {
      lost.add(runId); // nothing more of it is written
      leases.delete(runId);
      keeper.drop(runId);
    }
    f?.(err);
  };
  /** commits the queue now; throws only to a caller that waits for a durable fact */
  const commit = () => {
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
    timer = null;
    immediate = null;
    const ws = waiters;
    waiters = [];
    if (!queue.length) return ws.forEach((w) => (w.runId !== null && lost.has(w.runId) ? w.reject(new LeaseLostError(w.runId, path)) : w.resolve()));
    const runs = new Set(queue.map((f) => f.runId).filter((id): id is string => id !== null));
    fenced = new Map();
    refused = new Set();
    try {
      // IMMEDIATE: the write lock is taken first, so no sweep can slip between the fence checks and the writes
      flushNow.immediate();
    } catch (raw) {
      queue = []; // rolled back: what was queued is lost, and its runs are told
      const err = asStorageError(raw, path) ?? raw;
      // a full disk: what the WAL holds goes into the database file, so that the small write
      // recording the run's failure may still fit (best effort)
      try {
        c.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // the checkpoint needs room too
      }
      // the runs whose facts were lost are told; facts of no run (a pause) concern every run in progress
      let mine = [...runs].filter((id) => onLost.has(id) || leases.has(id));
      if (!mine.length) mine = [...new Set([...onLost.keys(), ...leases.keys()])];
      for (const id of mine) tell(id, err instanceof Error ? err : new Error(String(err)));
      // nobody to tell: said here, once, as one line
      if (!ws.length && !mine.length && !toldStorage) console.error(`aqven: could not write queued run facts: ${err instanceof Error ? err.message : String(err)}`);
      toldStorage ||= mine.length > 0 || ws.length > 0;
      return ws.forEach((w) => w.reject(err));
    }
    for (const id of refused) tell(id, new LeaseLostError(id, path));
    ws.forEach((w) => (w.runId !== null && lost.has(w.runId) ? w.reject(new LeaseLostError(w.runId, path)) : w.resolve()));
  };
  const later = (runId: string | null, write: () => void) => {
    queue.push({ runId, write });
    if (!timer && !immediate) {
      timer = setTimeout(commit, FLUSH_MS);
      timer.unref?.();
    }
  };
  const durable =
    <A extends unknown[]>(runIdOf: (...args: A) => string | null, f: (...args: A) => void) =>
    (...args: A): Promise<void> =>
      new Promise((resolve, reject) => {
        const runId = runIdOf(...args);
        queue.push({ runId, write: () => f(...args) });
        waiters.push({ runId, resolve, reject });
        immediate ??= setImmediate(commit);
      });

  // An attempt whose start is still queued when it finishes is written once, whole: one row
  // insert instead of an insert and an update. `open` tracks what of each attempt is written.
  type StartArgs = Parameters<RunStore['startAttempt']>[0];
  // chunks: stream_chunks rows queued for the attempt (their seq); chunked: some were written
  const open = new Map<string, { start: StartArgs; written: boolean; tries: number; done: boolean; chunks: number; chunked: boolean }>();
  type Open = { start: StartArgs; written: boolean; tries: number; done: boolean; chunks: number; chunked: boolean };
  const startRow = (a: StartArgs) =>
    s.startAttempt.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, a.request, a.startedAt);
  const finishAttempt = durable<[Open, AttemptRecord, boolean]>((st) => st.start.runId, (st, a, requestChanged) => {
    const id = st.start.id;
    const result = [
      a.outcome,
      a.finishReason,
      a.nativeFinishReason ?? null,
      a.finishNote ?? null,
      a.cause,
      a.action,
      a.responseText,
      a.error?.kind ?? null,
      a.error?.message ?? null,
      a.error?.detail ?? null,
      a.validationErrors,
      a.discarded,
      a.streamedText,
      a.usage.inputTokens,
      a.usage.outputTokens,
      a.usage.costUsd,
      a.usageUnknown ?? false,
      a.finishedAt,
    ] as const; // attemptResult's order
    if (st.written) s.finishAttempt.run(...result, requestChanged ? a.request : undefined, id);
    else {
      const b = st.start;
      s.insertAttempt.run(b.id, b.nodeRunId, b.runId, b.seq, b.model, b.chainIndex, b.answerNo, a.request, b.startedAt, ...result);
    }
    for (const t of a.tries.slice(st.written ? st.tries : 0)) insertTry(id, t);
    // the whole text is in streamed_text now (redacted when discarded)
    if (st.chunked) s.dropChunks.run(id);
  });
  const interruptAttempt = durable<[Open, Parameters<RunStore['interruptAttempt']>[1]]>(
    (st) => st.start.runId,
    (st, a) => {
      if (!st.written) startRow(st.start); // its queued start was lost with a failed commit
      st.written = true;
      s.interruptAttempt.run(a.message, a.streamedText, a.usage.inputTokens, a.usage.outputTokens, a.usage.costUsd, a.usageUnknown, a.finishedAt, st.start.id);
      if (st.chunked) s.dropChunks.run(st.start.id); // its text is in streamed_text now
      st.done = true;
    },
  );
  type InsertRunArgs = Parameters<RunStore['insertRun']>[0] & { lease: Lease };
  const insertRun = durable(
    (_r: InsertRunArgs) => null, // the lease's acquisition: nothing to check yet
    (r: InsertRunArgs) => {
      const { lease } = r;
      s.insertRun.run(r.id, r.project, r.flow, r.input, process.pid, lease.owner, lease.fence, lease.expiresAt - LEASE_TTL_MS, lease.expiresAt, r.startedAt);
      fenced.set(r.id, true); // the row was just written with our lease
    },
  );
  type FinishRunArgs = Parameters<RunStore['finishRun']>[0];
  const finishRun = durable(
    (r: FinishRunArgs) => r.id,
    (r: FinishRunArgs) =>
      s.finishRun.run(r.status, r.output, r.error?.code ?? null, r.error?.node ?? null, r.error?.message ?? null, r.error?.hint ?? null, r.turns, r.usage.inputTokens, r.usage.outputTokens, r.usage.costUsd, r.finishedAt, r.id),
  );
  const store: RunStore = {
    insertRun: (r) => {
      const lease = r.lease ?? newLease(r.id, Date.now());
      leases.set(r.id, lease);
      const lostHandler = r.onLost;
      if (lostHandler) onLost.set(r.id, lostHandler);
      return insertRun({ ...r, lease }).then(
        () => keeper.hold(lease, (err) => tell(r.id, err)),
        (err: unknown) => {
          leases.delete(r.id);
          onLost.delete(r.id);
          throw err;
        },
      );
    },
    finishRun: (r) =>
      finishRun(r).finally(() => {
        // the run is over: its lease is no longer renewed (its status frees it for sweeps)
        leases.delete(r.id);
        onLost.delete(r.id);
        keeper.drop(r.id);
      }),
    setRunTurns: (id, turns) => later(id, () => s.setRunTurns.run(turns, id)),
    insertNode: (n) => {
      if (n.status === 'running') runOfNode.set(n.id, n.runId);
      later(n.runId, () =>
        s.insertNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.status, n.policy, n.startedAt, n.status === 'skipped' ? n.startedAt : null),
      );
    },
    finishNode: (n) => {
      const runId = runOfNode.get(n.id) ?? null;
      runOfNode.delete(n.id);
      later(runId, () =>
        s.finishNode.run(n.status, n.output, n.error?.code ?? null, n.error?.message ?? null, n.error?.hint ?? null, n.usage.inputTokens, n.usage.outputTokens, n.usage.costUsd, n.finishedAt, n.id),
      );
    },
    startAttempt: (a) => {
      const st = { start: a, written: false, tries: 0, done: false, chunks: 0, chunked: false };
      open.set(a.id, st);
      later(a.runId, () => {
        if (st.done) return;
        startRow(a);
        st.written = true;
      });
    },
    appendStreamed: (id, text) => {
      const st = open.get(id);
      if (!st) return;
      const seq = st.chunks++;
      later(st.start.runId, () => {
        if (st.done) return;
        s.appendStreamed.run(id, seq, text);
        st.chunked = true;
      });
    },
    resetStreamed: (id) => {
      const st = open.get(id);
      later(st?.start.runId ?? null, () => st && !st.done && st.chunked && s.dropChunks.run(id));
    },
    insertTry: (id, t) => {
      const st = open.get(id);
      later(st?.start.runId ?? null, () => {
        if (!st || st.done) return;
        insertTry(id, t);
        st.tries++;
      });
    },
    finishAttempt: (id, a, requestChanged = true) => {
      const st = open.get(id);
      if (!st) return Promise.reject(new Error(`attempt ${id} was never started`));
      // from here on the queued start, tries and text of this attempt are written by the finish
      st.done = true;
      open.delete(id);
      return finishAttempt(st, a, requestChanged);
    },
    interruptAttempt: (id, a) => {
      const st = open.get(id);
      if (!st) return Promise.resolve(); // it finished after all
      open.delete(id);
      return interruptAttempt(st, a);
    },
    // the gate's interface is synchronous, and a pause is rare: commit it on the spot
    setPause: (model, until, reason, origin) => {
      later(null, () =>
        s.setPause.run(model, until, reason, origin?.setAt ?? null, origin?.serverWait ?? null, origin?.askedMs ?? null, origin?.maxWaitMs ?? null),
      );
      commit();
    },
    getPause: (model) => s.getPause.get(model) ?? null,
    flush: commit,
  };
  cache.set(db, store);
  return store;
}

/**
 * Recovery of the attempts a dead process cut off in run `runId` (DESIGN: Storage), before they are
 * closed: each is marked discarded (it produced no output), and its streamed text — the
 * stream_chunks rows, redacted as they were written, after any text a version before them stored
 * in streamed_text, raw — is joined, redacted, capped and put in streamed_text; the rows go.
 * Runs inside the caller's transaction.
 */
export function closeCutOffStreams(db: Db, runId: string): void {
  const cut = db
    .select({ id: attempts.id, text: attempts.streamedText })
    .from(attempts)
    .where(and(eq(attempts.runId, runId), isNull(attempts.outcome), isNull(attempts.finishedAt)))
    .all();
  if (cut.length === 0) return;
  const P = sql.placeholder;
  const chunks = db
    .select({ text: streamChunks.text })
    .from(streamChunks)
    .where(eq(streamChunks.attemptId, P('attemptId')))
    .orderBy(asc(streamChunks.seq))
    .prepare();
  const close = db
    .update(attempts)
    .set({ ...placeholders(attempts, ['streamedText']), discarded: true })
    .where(eq(attempts.id, P('id')))
    .prepare();
  const drop = db.delete(streamChunks).where(eq(streamChunks.attemptId, P('attemptId'))).prepare();
  for (const a of cut) {
    const text = (a.text ?? '') + chunks.all({ attemptId: a.id }).map((r) => r.text).join('');
    close.run({ streamedText: text ? capFailureText(redact(text)) : null, id: a.id });
    drop.run({ attemptId: a.id });
  }
}
