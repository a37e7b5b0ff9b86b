// Writes of a run as it happens (DESIGN: Storage). A finished attempt, a finished run and a
// rate-limit pause are each committed synchronously (with everything queued before them) before
// the engine acts on them; the other facts follow within FLUSH_MS. Prepared statements are made
// once per connection: this is the hot path of every attempt.
//
// Fencing (DESIGN: Storage, leases): a run's row is inserted with this process's lease, and every
// write transaction checks, once per run it touches, that the run's owner and fence are still
// ours; the facts of a run that changed hands (swept as dead, taken over) are refused, not
// written, and the run is told (onLost), as it is when its facts cannot be written at all.
//
// Both dialects (DESIGN: Storage, "One data layer, two dialects"): the statements are built once
// with drizzle over `db.t`. SQLite runs them synchronously on its one connection and commits the
// queue in one synchronous transaction; PostgreSQL sends the same statements, in order, on one
// pooled connection per commit, the fence checks first (`FOR SHARE`: a take-over waits for the
// commit), and commits one queue at a time — whatever arrives meanwhile shares the next commit.
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type pg from 'pg';
import type { AttemptRecord, ClusterPauses, NodePolicy, PauseOrigin, TryRecord, UsageTotals } from '@/lib/engine/types';
import { clusterGate } from './cluster-gate';
import { LEASE_TTL_MS, leaseKeeper, LeaseLostError, newLease, releaseLease, type Lease } from './run-lease';
import { INTERRUPTED_ATTEMPT_ERROR } from './interrupted-error';
import { asStorageError } from './storage-error';
import { capFailureText, redact } from '@/lib/redact';
import { excluded, pgStatement, placeholders, valueStatement, writeStatement, type BuiltQuery } from './typed-sql';
import type { Db, Orm, RunError } from './types';

export interface RunStore {
  /**
   * The run's first write, with its lease (default: this process's, from the wall clock); resolves
   * once committed — a run is never started (no provider called) before it can be recorded. From
   * then on the lease is renewed, and `onLost` hears when the run's facts are refused (its lease
   * was lost: LeaseLostError) or cannot be written (StorageError).
   */
  insertRun(r: {
    id: string;
    project: string;
    flow: string;
    input: unknown;
    startedAt: number;
    lease?: Lease;
    onLost?: (err: Error) => void;
    /** the project snapshot the run runs under (PostgreSQL mode) */
    snapshotId?: number | null;
    /** sha256 of the project's files the run runs under (Session.projectHash) */
    projectHash?: string | null;
    /** who started the run: a user's name, `token:<name>`, `cli:<login>` */
    startedBy?: string | null;
  }): Promise<void>;
  /**
   * A run whose row exists already — a queued run a worker claimed, or a run taken over from a dead
   * worker — carries on with `lease` (already committed by the claim): its facts are fenced by it
   * and the lease renewed from now on, as insertRun's are. `nodeRunIds`: node runs of the run that
   * were written before (a run taken over restarts them), so that their end is fenced too.
   */
  adoptRun(r: { id: string; lease: Lease; onLost?: (err: Error) => void; nodeRunIds?: readonly string[] }): void;
  /**
   * Hands a running run back without finishing it (DESIGN: Storage, "Leases"): commits everything
   * queued, then stops renewing its lease and releases it (releaseLease), so another process may
   * take it over at once. Resolves with whether the lease was still ours to release.
   */
  releaseRun(id: string, now: number): Promise<boolean>;
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
  insertNode(n: {
    id: string;
    runId: string;
    nodeId: string;
    agent: string;
    turn: number;
    /** the node's place in its flow */
    ord: number;
    status: 'running' | 'skipped';
    policy: NodePolicy | null;
    startedAt: number | null;
  }): void;
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
  /**
   * A later pause wins, and brings its origin (and frees the probe claim of the pause it replaces);
   * an earlier or equal one changes nothing. PostgreSQL: announced (NOTIFY) once committed.
   */
  setPause(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin): void;
  /**
   * SQLite: read from the database; PostgreSQL: the pause as this process knows it — its own at
   * once, other processes' as their notices arrive (db/cluster-gate.ts; a poll every second too)
   */
  getPause(model: string): number | null;
  /** PostgreSQL: re-reads every stored pause now (SQLite reads them on every getPause) */
  refreshPauses(): Promise<void>;
  /** PostgreSQL: the gate's cluster hooks (the probe claimed cluster-wide, waiters woken by notices); absent on SQLite */
  clusterPauses?: ClusterPauses;
  /** commits every queued fact now (and settles the durable facts waiting for it); SQLite commits before it returns */
  flush(): Promise<void>;
}

/** longest a queued fact waits before it is written (streamed text batches, in-flight rows) */
export const FLUSH_MS = 100;

const cache = new WeakMap<Db, RunStore>();

/** Writes what the store of `db` has queued, if it has a store. */
export async function flushRunStore(db: Db): Promise<void> {
  await cache.get(db)?.flush();
}

/** A statement of the store, bound and run by the dialect: `run(...args)` takes the values in its placeholders' order. */
interface Stmt<K extends readonly string[]> {
  run(...args: { [I in keyof K]: unknown }): void;
}

/**
 * How a dialect prepares and commits the store's statements. SQLite: prepared once, run at once,
 * the commit synchronous. PostgreSQL: each run() adds its statement to the commit's batch, sent in
 * order on the commit's connection once the queue is drained, then COMMIT.
 */
interface Backend {
  prepare<const K extends readonly string[]>(query: BuiltQuery, order: K): Stmt<K>;
  /** runs `drain` in one write transaction; `fence(runIds)` first tells which runs are still ours (PostgreSQL) */
  transaction(runIds: string[], fence: (ids: string[], q: Orm, client: pg.PoolClient) => Promise<Map<string, boolean>>, drain: () => void): void | Promise<void>;
  /** a failed commit: make room for the next (SQLite: checkpoint the WAL into the file) */
  afterFailure(): void;
}

function sqliteBackend(db: Extract<Db, { dialect: 'sqlite' }>): Backend {
  const c = db.$client;
  return {
    prepare: (query, order) => writeStatement(c, query, order),
    transaction: (_ids, _fence, drain) => {
      // IMMEDIATE: the write lock is taken first, so no sweep can slip between the fence checks and the writes
      c.transaction(drain).immediate();
    },
    afterFailure: () => {
      // a full disk: what the WAL holds goes into the database file, so that the small write
      // recording the run's failure may still fit (best effort)
      try {
        c.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // the checkpoint needs room too
      }
    },
  };
}

/** PostgreSQL's deadlock_detected and serialization_failure: the commit is tried again */
const RETRYABLE = new Set(['40P01', '40001']);
const COMMIT_TRIES = 3;

/** names of the run store's PostgreSQL statements: the same text always gets the same name in a process */
let statementNo = 0;

function pgBackend(db: Extract<Db, { dialect: 'pg' }>): Backend {
  /** the statements of the commit in progress, sent once the batch is drained */
  let current: { name: string; text: string; values: unknown[] }[] | null = null;
  return {
    prepare: (query, order) => {
      const st = pgStatement(query, order);
      // a named statement: each connection parses and plans it once, then only binds
      const name = `aqven_store_${++statementNo}`;
      return {
        run: (...args) => {
          if (!current) throw new Error('a run-store statement was queued outside a commit');
          current.push({ name, text: st.text, values: st.values(args) });
        },
      };
    },
    transaction: async (ids, fence, drain) => {
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        const fences = await fence(ids, db.q, client);
        const batch: { name: string; text: string; values: unknown[] }[] = (current = []);
        try {
          drain();
        } finally {
          current = null;
        }
        for (let tries = 1; ; tries++) {
          try {
            // one after another on this connection (node-postgres sends a client's queries in order)
            for (const st of batch) await client.query(st);
            await client.query('COMMIT');
            return;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            // a deadlock or a serialization failure rolled the batch back: the same batch is sent
            // again, as long as the fences it was drained under still hold
            if (tries >= COMMIT_TRIES || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
            await client.query('BEGIN');
            const again = await fence(ids, db.q, client);
            if ([...fences].some(([id, ok]) => again.get(id) !== ok)) throw err;
          }
        }
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    afterFailure: () => undefined,
  };
}

export function runStore(db: Db): RunStore {
  const hit = cache.get(db);
  if (hit) return hit;
  const backend = db.dialect === 'sqlite' ? sqliteBackend(db) : pgBackend(db);
  const { attempts, nodeRuns, rateLimitPauses, runs, streamChunks, transportTries } = db.t;
  const q = db.q;
  // Typed statements over db/schema.ts (a renamed or removed column is a type error), prepared once
  // for this connection and run synchronously; each value is a placeholder named after its column.
  // They are bound by db/typed-sql.ts (drizzle's SQL, a binding planned once): run(...) takes the
  // values in the order the statement's columns are listed below.
  const P = sql.placeholder;
  const w = <const K extends readonly string[]>(query: BuiltQuery, order: K) => backend.prepare(query, order);
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
  const runStart = ['id', 'project', 'flow', 'input', 'pid', 'owner', 'fence', 'heartbeatAt', 'leaseExpiresAt', 'snapshotId', 'projectHash', 'startedBy', 'startedAt'] as const;
  const runEnd = ['status', 'output', 'errorCode', 'errorNode', 'errorMessage', 'errorHint', 'turns', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
  const attemptCut = ['errorMessage', 'streamedText', 'inputTokens', 'outputTokens', 'costUsd', 'usageUnknown', 'finishedAt'] as const;
  const nodeStart = ['id', 'runId', 'nodeId', 'agent', 'turn', 'ord', 'status', 'policy', 'startedAt', 'finishedAt'] as const;
  const nodeEnd = ['status', 'output', 'errorCode', 'errorMessage', 'hint', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
  const chunk = ['attemptId', 'seq', 'text'] as const;
  const tryRow = ['attemptId', 'tryNo', 'status', 'error', 'retryAfterMs', 'waitedMs', 'discardedText', 'startedAt', 'finishedAt'] as const;
  const pause = ['model', 'pausedUntil', 'reason', 'setAt', 'serverWait', 'askedMs', 'maxWaitMs'] as const;
  const s = {
    insertRun: w(q.insert(runs).values({ ...placeholders(runs, runStart), status: 'running' }), runStart),
    finishRun: w(q.update(runs).set(placeholders(runs, runEnd)).where(eq(runs.id, P('id'))), [...runEnd, 'id']),
    setRunTurns: w(q.update(runs).set(placeholders(runs, ['turns'])).where(eq(runs.id, P('id'))), ['turns', 'id']),
    interruptAttempt: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, attemptCut), errorKind: 'transport', discarded: true })
        .where(and(eq(attempts.id, P('id')), isNull(attempts.outcome))),
      [...attemptCut, 'id'],
    ),
    insertNode: w(q.insert(nodeRuns).values(placeholders(nodeRuns, nodeStart)), nodeStart),
    finishNode: w(q.update(nodeRuns).set(placeholders(nodeRuns, nodeEnd)).where(eq(nodeRuns.id, P('id'))), [...nodeEnd, 'id']),
    startAttempt: w(q.insert(attempts).values(placeholders(attempts, attemptStart)), attemptStart),
    insertAttempt: w(q.insert(attempts).values(placeholders(attempts, [...attemptStart, ...attemptResult])), [...attemptStart, ...attemptResult]),
    // one row per batch: appending costs the batch, not the text so far (`streamed_text || ?` copied
    // the whole text on every batch: quadratic). Joined on read; gone when the attempt finishes.
    appendStreamed: w(q.insert(streamChunks).values(placeholders(streamChunks, chunk)), chunk),
    dropChunks: w(q.delete(streamChunks).where(eq(streamChunks.attemptId, P('attemptId'))), ['attemptId']),
    insertTry: w(q.insert(transportTries).values(placeholders(transportTries, tryRow)), tryRow),
    // `request` is rewritten only when one is given (undefined: NULL, and the stored one is kept)
    finishAttempt: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, attemptResult), request: sql`coalesce(${placeholders(attempts, ['request']).request}, ${attempts.request})` })
        .where(eq(attempts.id, P('id'))),
      [...attemptResult, 'request', 'id'],
    ),
    // a later pause wins: the row is replaced only by a pause that ends later
    setPause: w(
      q
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
            // a new pause is probed afresh: a claim on the one it replaces is void
            probeOwner: null,
            probeUntil: null,
          },
          setWhere: sql`${excluded(rateLimitPauses.pausedUntil)} > ${rateLimitPauses.pausedUntil}`,
        }),
      pause,
    ),
  };
  // SQLite reads a pause from the database on every call; PostgreSQL keeps the pauses it knows of
  // (its own, and those other processes announced or the poll read: db/cluster-gate.ts), as a
  // call cannot wait for the server here
  const readPause =
    db.dialect === 'sqlite'
      ? (() => {
          const st = valueStatement<number, readonly ['model']>(
            db.$client,
            db.q.select({ until: rateLimitPauses.pausedUntil }).from(rateLimitPauses).where(eq(rateLimitPauses.model, P('model'))),
            ['model'],
          );
          return (model: string) => st.get(model) ?? null;
        })()
      : null;
  const cluster = db.dialect === 'pg' ? clusterGate(db) : null;
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
  const path = db.name;
  /** the lease each run of this store was started with, while it runs */
  const leases = new Map<string, Lease>();
  /** runs whose first row is queued, not yet committed (PostgreSQL's fence check finds no row for them yet) */
  const inserting = new Set<string>();
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
  // SQLite checks a run's fence when the transaction first meets one of its facts
  const holds =
    db.dialect === 'sqlite'
      ? (() => {
          const { runs: r } = db.t;
          const P = sql.placeholder;
          const st = valueStatement(
            db.$client,
            db.q.select({ id: r.id }).from(r).where(and(eq(r.id, P('runId')), eq(r.owner, P('owner')), eq(r.fence, P('fence')))),
            ['runId', 'owner', 'fence'],
          );
          return (l: Lease) => st.get(l.runId, l.owner, l.fence) !== undefined;
        })()
      : () => false; // PostgreSQL checks every run of a commit before it writes (fencePg)
  const ours = (runId: string): boolean => {
    let ok = fenced.get(runId);
    if (ok === undefined) {
      const lease = leases.get(runId);
      ok = !lost.has(runId) && (!lease || holds(lease));
      fenced.set(runId, ok);
    }
    return ok;
  };
  /** PostgreSQL: the fences of a commit's runs, read and share-locked (a take-over waits for this commit) */
  const fencePg = async (ids: string[], orm: Orm, client: pg.PoolClient): Promise<Map<string, boolean>> => {
    const seen = new Map<string, boolean>();
    const mine = ids.filter((id) => leases.has(id) && !lost.has(id));
    for (const id of ids) if (lost.has(id)) seen.set(id, false);
    if (mine.length) {
      const { runs: r } = db.t;
      // locked in id order (bytewise, as JavaScript sorts), as the lease keeper renews them: two
      // transactions never wait on each other in a circle
      const built = orm.select({ id: r.id, owner: r.owner, fence: r.fence }).from(r).where(inArray(r.id, mine)).orderBy(sql`${r.id} collate "C"`).toSQL();
      const rows = (await client.query<{ id: string; owner: string | null; fence: number }>(`${built.sql} for share`, built.params)).rows;
      const found = new Map(rows.map((row) => [row.id, row]));
      for (const id of mine) {
        const lease = leases.get(id)!;
        const row = found.get(id);
        seen.set(id, row ? row.owner === lease.owner && row.fence === lease.fence : inserting.has(id));
      }
    }
    for (const [id, ok] of seen) fenced.set(id, ok);
    return seen;
  };
  const drain = (batch: Fact[]) => {
    for (const f of batch) {
      if (f.runId !== null && !ours(f.runId)) refused.add(f.runId);
      else f.write();
    }
  };
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
  const settle = (ws: Waiter[]) => ws.forEach((w) => (w.runId !== null && lost.has(w.runId) ? w.reject(new LeaseLostError(w.runId, path)) : w.resolve()));
  /** commits what is queued when it starts; rejects nobody but the waiters of durable facts */
  const commitOnce = (): void | Promise<void> => {
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
    timer = null;
    immediate = null;
    const ws = waiters;
    waiters = [];
    const batch = queue;
    queue = [];
    if (!batch.length) return settle(ws);
    const runs = new Set(batch.map((f) => f.runId).filter((id): id is string => id !== null));
    fenced = new Map();
    refused = new Set();
    const failed = (raw: unknown) => {
      // rolled back: what was queued is lost, and its runs are told
      const err = asStorageError(raw, path) ?? raw;
      backend.afterFailure();
      // the runs whose facts were lost are told; facts of no run (a pause) concern every run in progress
      let mine = [...runs].filter((id) => onLost.has(id) || leases.has(id));
      if (!mine.length) mine = [...new Set([...onLost.keys(), ...leases.keys()])];
      for (const id of mine) tell(id, err instanceof Error ? err : new Error(String(err)));
      // nobody to tell: said here, once, as one line
      if (!ws.length && !mine.length && !toldStorage) console.error(`aqven: could not write queued run facts: ${err instanceof Error ? err.message : String(err)}`);
      toldStorage ||= mine.length > 0 || ws.length > 0;
      ws.forEach((w) => w.reject(err));
    };
    const committed = () => {
      for (const id of runs) inserting.delete(id);
      for (const id of refused) tell(id, new LeaseLostError(id, path));
      settle(ws);
    };
    let pending: void | Promise<void>;
    try {
      pending = backend.transaction([...runs], fencePg, () => drain(batch));
    } catch (raw) {
      return failed(raw);
    }
    if (pending) return pending.then(committed, failed);
    committed();
  };
  // SQLite commits synchronously, on the spot; PostgreSQL one commit at a time, in order
  let tail: Promise<void> = Promise.resolve();
  const commit = (): Promise<void> => {
    if (db.dialect === 'sqlite') {
      commitOnce();
      return Promise.resolve();
    }
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
    timer = null;
    immediate = null;
    tail = tail.then(commitOnce).catch((err: unknown) => console.error(`aqven: a commit of run facts failed: ${String(err)}`));
    return tail;
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
      s.insertRun.run(r.id, r.project, r.flow, r.input, process.pid, lease.owner, lease.fence, lease.expiresAt - LEASE_TTL_MS, lease.expiresAt, r.snapshotId ?? null, r.projectHash ?? null, r.startedBy ?? null, r.startedAt);
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
      inserting.add(r.id);
      const lostHandler = r.onLost;
      if (lostHandler) onLost.set(r.id, lostHandler);
      return insertRun({ ...r, lease }).then(
        () => keeper.hold(lease, (err) => tell(r.id, err)),
        (err: unknown) => {
          leases.delete(r.id);
          inserting.delete(r.id);
          onLost.delete(r.id);
          throw err;
        },
      );
    },
    adoptRun: (r) => {
      leases.set(r.id, r.lease);
      lost.delete(r.id);
      if (r.onLost) onLost.set(r.id, r.onLost);
      for (const n of r.nodeRunIds ?? []) runOfNode.set(n, r.id);
      keeper.hold(r.lease, (err) => tell(r.id, err));
    },
    releaseRun: async (id, now) => {
      // the closing facts first: the next owner must find them committed
      await commit();
      const lease = leases.get(id);
      leases.delete(id);
      onLost.delete(id);
      keeper.drop(id);
      for (const [node, run] of runOfNode) if (run === id) runOfNode.delete(node);
      const ours = !!lease && !lost.has(id);
      lost.add(id); // a late fact of the run is refused, not written unfenced
      return ours && releaseLease(db, lease, now);
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
        s.insertNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.ord, n.status, n.policy, n.startedAt, n.status === 'skipped' ? n.startedAt : null),
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
      const committed = commit();
      cluster?.noteOwnPause(model, until, committed);
    },
    getPause: (model) => (readPause ? readPause(model) : (cluster?.get(model) ?? null)),
    refreshPauses: async () => {
      await cluster?.refresh();
    },
    ...(cluster && { clusterPauses: cluster }),
    flush: commit,
  };
  cache.set(db, store);
  return store;
}

/**
 * Closes the attempts a dead process cut off in run `runId` (DESIGN: Storage): each never got an
 * outcome; it is marked discarded (it produced no output) with the interrupted error and `now` as
 * its end, its usage as recorded kept, and its streamed text — the stream_chunks rows, redacted as
 * they were written, after any text a version before them stored in streamed_text, raw — joined,
 * redacted, capped and put in streamed_text; the rows go. Runs inside the caller's transaction
 * (`q`): the sweep that marks a run interrupted (SQLite) and a worker's take-over (PostgreSQL).
 */
export async function closeCutOffAttempts(db: Db, q: Orm, runId: string, now: number): Promise<number> {
  const { attempts, streamChunks } = db.t;
  const cut = await q
    .select({ id: attempts.id, text: attempts.streamedText })
    .from(attempts)
    .where(and(eq(attempts.runId, runId), isNull(attempts.outcome), isNull(attempts.finishedAt)));
  const why = INTERRUPTED_ATTEMPT_ERROR;
  for (const a of cut) {
    const chunks = await q.select({ text: streamChunks.text }).from(streamChunks).where(eq(streamChunks.attemptId, a.id)).orderBy(asc(streamChunks.seq));
    const text = (a.text ?? '') + chunks.map((r) => r.text).join('');
    await q
      .update(attempts)
      .set({ streamedText: text ? capFailureText(redact(text)) : null, discarded: true, errorKind: why.kind, errorMessage: why.message, finishedAt: now })
      .where(eq(attempts.id, a.id));
    await q.delete(streamChunks).where(eq(streamChunks.attemptId, a.id));
  }
  return cut.length;
}
