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
//
// Feeds (DESIGN: Storage, "Notes, search and daily statistics"), written in the same commit as the
// facts they come from, by the rules of db/run-aggregates.ts: search_docs rows for a run's input,
// each finished node's output and each failure's text; failure_sig on a failed attempt or node, in
// the statement that finishes it; and, for `flow` runs only, agent_daily / node_daily /
// failure_daily sums, gathered per commit and upserted once per key at its end.
import { and, asc, eq, exists, inArray, isNull, sql } from 'drizzle-orm';
import type pg from 'pg';
import type { AttemptRecord, ClusterPauses, NodePolicy, PauseOrigin, TryRecord, UsageTotals } from '@/lib/engine/types';
import { clusterGate } from './cluster-gate';
import { cutOffAt, LEASE_TTL_MS, leaseKeeper, LeaseLostError, newLease, releaseLease, type Lease } from './run-lease';
import { INTERRUPTED_ATTEMPT_ERROR } from './interrupted-error';
import { indexPendingSearchDocs } from './search-index';
import { callerSpendUpsert } from './spend-queries';
import { asStorageError } from './storage-error';
import { capFailureText, redact } from '@/lib/redact';
import { budgetCaller, spendDay } from '@/lib/shared/spend-budget';
import {
  agentDailyUpsert,
  attemptErrorText,
  attemptSignature,
  capSearchBody,
  DailySums,
  failureDailyUpsert,
  isFailedAttempt,
  nodeDailyUpsert,
  nodeSignature,
  valueSearchText,
  writeDailySums,
} from './run-aggregates';
import type { RunKind } from './queries';
import { excluded, pgStatement, placeholders, valueStatement, writeStatement, type BuiltQuery } from './typed-sql';
import type { Db, Orm, RunError } from './types';

/** the kind of a run (db/queries.ts), re-exported for the store's callers */
export type { RunKind };

/** a JSON column's value as its column would encode it (undefined: NULL) */
const jsonText = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

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
    /** default 'flow'; a replay names the run (replayOf) and the node (replayNode) it re-runs */
    kind?: RunKind;
    replayOf?: string | null;
    replayNode?: string | null;
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

/** One value for each of a statement's placeholders, in their order. */
type ValuesOf<K extends readonly unknown[]> = { [I in keyof K]: unknown };

/** A statement of the store, bound and run by the dialect: `run(...args)` takes the values in its placeholders' order. */
interface Stmt<K extends readonly string[]> {
  run(...args: ValuesOf<K>): void;
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
  /** after a flush: what the store feeds behind its commits is done too (SQLite: the full-text index, db/search-index.ts) */
  afterFlush(): void;
}

/** how long search docs may wait to be indexed after the commit that wrote them (SQLite) */
const SEARCH_INDEX_MS = 1_000;

function sqliteBackend(db: Extract<Db, { dialect: 'sqlite' }>): Backend {
  const c = db.$client;
  // made once: better-sqlite3 builds a transaction's four wrappers on every transaction() call
  const tx = c.transaction((drain: () => void) => drain());
  // the full-text index of the search docs the commits wrote, in batches (db/search-index.ts)
  let indexTimer: ReturnType<typeof setTimeout> | null = null;
  let toldIndex = false;
  const indexNow = () => {
    if (indexTimer) clearTimeout(indexTimer);
    indexTimer = null;
    try {
      if (c.open) indexPendingSearchDocs(db);
    } catch (err) {
      // the docs stay in search_docs: the next batch (or search) indexes them
      if (!toldIndex) console.error(`aqven: indexing run text for search failed (tried again later): ${err instanceof Error ? err.message : String(err)}`);
      toldIndex = true;
    }
  };
  return {
    prepare: (query, order) => writeStatement(c, query, order),
    transaction: (_ids, _fence, drain) => {
      // IMMEDIATE: the write lock is taken first, so no sweep can slip between the fence checks and the writes
      tx.immediate(drain);
      if (!indexTimer) {
        indexTimer = setTimeout(indexNow, SEARCH_INDEX_MS);
        indexTimer.unref?.();
      }
    },
    afterFlush: indexNow,
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
    afterFlush: () => undefined,
  };
}

export function runStore(db: Db): RunStore {
  const hit = cache.get(db);
  if (hit) return hit;
  const backend = db.dialect === 'sqlite' ? sqliteBackend(db) : pgBackend(db);
  const { agentDaily, attempts, callerSpend, failureDaily, nodeDaily, nodeRuns, rateLimitPauses, runs, searchDocs, streamChunks, transportTries } = db.t;
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
    'reasoningTokens',
    'costSource',
    'finishedAt',
    'failureSig',
  ] as const;
  // the columns each statement writes, in the order its run() takes them (the id of an update last)
  const runStart = [
    'id',
    'project',
    'flow',
    'input',
    'pid',
    'owner',
    'fence',
    'heartbeatAt',
    'leaseExpiresAt',
    'snapshotId',
    'projectHash',
    'startedBy',
    'kind',
    'replayOf',
    'replayNode',
    'startedAt',
  ] as const;
  const runEnd = ['status', 'output', 'errorCode', 'errorNode', 'errorMessage', 'errorHint', 'turns', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
  const attemptCut = ['errorMessage', 'streamedText', 'inputTokens', 'outputTokens', 'costUsd', 'usageUnknown', 'finishedAt'] as const;
  const nodeStart = ['id', 'runId', 'nodeId', 'agent', 'turn', 'ord', 'status', 'policy', 'startedAt', 'finishedAt'] as const;
  /** a node row's columns that its end does not write */
  const nodeHead = ['id', 'runId', 'nodeId', 'agent', 'turn', 'ord', 'policy', 'startedAt'] as const;
  const nodeEnd = ['status', 'output', 'errorCode', 'errorMessage', 'hint', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt', 'failureSig'] as const;
  const chunk = ['attemptId', 'seq', 'text'] as const;
  const tryRow = [
    'attemptId',
    'tryNo',
    'status',
    'error',
    'retryAfterMs',
    'waitedMs',
    'discardedText',
    'startedAt',
    'finishedAt',
    'generationId',
    'usageLookup',
    'lookupAfter',
  ] as const;
  const pause = ['model', 'pausedUntil', 'reason', 'setAt', 'serverWait', 'askedMs', 'maxWaitMs'] as const;
  const doc = ['runId', 'nodeRunId', 'attemptId', 'field', 'body', 'at'] as const;
  const agentDay = ['agent', 'day', 'model', 'outcome', 'cause', 'action', 'attempts', 'inputTokens', 'outputTokens', 'costUsd', 'durationMs'] as const;
  const nodeDay = ['agent', 'day', 'status', 'nodes', 'lastStartedAt'] as const;
  const failureDay = ['sig', 'day', 'level', 'agent', 'model', 'code', 'message', 'failures', 'costUsd', 'firstAt', 'lastAt'] as const;
  const spendRow = ['caller', 'day', 'usd'] as const;
  const s = {
    // the input and a node's output go as JSON text made once: the same text is searched (a large value is not stringified twice)
    insertRun: w(q.insert(runs).values({ ...placeholders(runs, runStart), input: sql`${P('input')}`, status: 'running' }), runStart),
    finishRun: w(
      q
        .update(runs)
        .set(placeholders(runs, runEnd))
        .where(eq(runs.id, P('id'))),
      [...runEnd, 'id'],
    ),
    setRunTurns: w(
      q
        .update(runs)
        .set(placeholders(runs, ['turns']))
        .where(eq(runs.id, P('id'))),
      ['turns', 'id'],
    ),
    interruptAttempt: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, attemptCut), errorKind: 'transport', discarded: true })
        .where(and(eq(attempts.id, P('id')), isNull(attempts.outcome))),
      [...attemptCut, 'id'],
    ),
    insertNode: w(q.insert(nodeRuns).values(placeholders(nodeRuns, nodeStart)), nodeStart),
    // a node whose start is still queued when it ends: one row, whole (its output JSON text as given, as finishNode's)
    insertEndedNode: w(q.insert(nodeRuns).values({ ...placeholders(nodeRuns, [...nodeHead, ...nodeEnd.filter((k) => k !== 'output')]), output: sql`${P('output')}` }), [
      ...nodeHead,
      ...nodeEnd,
    ]),
    finishNode: w(
      q
        .update(nodeRuns)
        .set({ ...placeholders(nodeRuns, nodeEnd), output: sql`${P('output')}` })
        .where(eq(nodeRuns.id, P('id'))),
      [...nodeEnd, 'id'],
    ),
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
    searchDoc: w(q.insert(searchDocs).values(placeholders(searchDocs, doc)), doc),
    // the daily sums add to what is there (ON CONFLICT … SET x = x + excluded.x: concurrent writers on PostgreSQL lose nothing)
    agentDaily: w(q.insert(agentDaily).values(placeholders(agentDaily, agentDay)).onConflictDoUpdate(agentDailyUpsert(db.t)), agentDay),
    nodeDaily: w(q.insert(nodeDaily).values(placeholders(nodeDaily, nodeDay)).onConflictDoUpdate(nodeDailyUpsert(db.t)), nodeDay),
    failureDaily: w(q.insert(failureDaily).values(placeholders(failureDaily, failureDay)).onConflictDoUpdate(failureDailyUpsert(db.t)), failureDay),
    // what the attempts of a caller's runs cost, per UTC day, against their budget (db/spend-queries.ts)
    callerSpend: w(q.insert(callerSpend).values(placeholders(callerSpend, spendRow)).onConflictDoUpdate(callerSpendUpsert(db.t)), spendRow),
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
            db.q
              .select({ until: rateLimitPauses.pausedUntil })
              .from(rateLimitPauses)
              .where(eq(rateLimitPauses.model, P('model'))),
            ['model'],
          );
          return (model: string) => st.get(model) ?? null;
        })()
      : null;
  const cluster = db.dialect === 'pg' ? clusterGate(db) : null;
  const insertTry = (attemptId: string, t: TryRecord) =>
    // a cut-off answer with a generation id: its usage is looked up later (lib/flow/usage-lookup.ts), due at once
    s.insertTry.run(
      attemptId,
      t.tryNo,
      t.status,
      t.error,
      t.retryAfterMs,
      t.waitedMs,
      t.discardedText ?? null,
      t.startedAt,
      t.finishedAt,
      t.generationId ?? null,
      t.generationId ? 'pending' : null,
      t.generationId ? t.finishedAt : null,
    );

  // Write-behind with durable points: facts that do not decide anything (a run, node or attempt
  // started, a try, streamed text, a node finished) are queued and written within FLUSH_MS.
  // A durable fact — a run started, a finished attempt, a finished run — is committed with what
  // its run queued before it (and the facts of no run), and the promise it returns resolves only
  // then; the engine awaits it before it acts on the attempt (DESIGN: Storage, "Durable points"). Durable facts arriving in the same event-loop turn (concurrent runs) share one
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
  /**
   * what the feeds need of each run of this store: its kind (null until an adopted run's row is
   * read), its start, and whose budget its spend counts against (budgetCaller of its started_by)
   */
  type RunInfo = { kind: RunKind | null; startedAt: number; inputDoc: string | null; caller: string | null };
  const runInfo = new Map<string, RunInfo>();
  /** each node run in progress: its run (finishNode names only the node run), agent and start (null until read) */
  type NodeInfo = { runId: string; run: RunInfo; agent: string | null; startedAt: number | null; row?: NodeRow };
  /**
   * A node's first row as this store queued it: once written, its end is an update; a node that
   * ends before its queued row is written is written once, whole, where that row was queued (the
   * attempts queued after it name it): one insert, not an insert and an update.
   */
  type NodeRow = { written: boolean; end: ValuesOf<typeof nodeEnd> | null };
  const nodeInfo = new Map<string, NodeInfo>();
  /** runs whose turn count is queued to be written (setRunTurns): the latest count */
  const turnsDue = new Map<string, number>();
  /** PostgreSQL: adopted runs whose row (kind, input) and open node runs (agent) are read before their first commit */
  const unread = new Map<string, readonly string[]>();
  /** the daily sums of the commit being drained, written at its end */
  const sums = new DailySums();
  /** the commit's spend per caller and UTC day (`caller\u0000day` → USD), written at its end */
  const spend = new Map<string, number>();
  /** an attempt's cost, for its run's caller (none: nobody's budget, or nothing spent) */
  const spent = (run: RunInfo | undefined, usd: number, at: number) => {
    if (!run?.caller || !(usd > 0)) return;
    const key = `${run.caller}\u0000${spendDay(at)}`;
    spend.set(key, (spend.get(key) ?? 0) + usd);
  };
  /** a run leaves this store (finished elsewhere, handed back, lost): what the feeds kept of it goes */
  const forget = (runId: string) => {
    fences?.forget(runId);
    runInfo.delete(runId);
    turnsDue.delete(runId);
    unread.delete(runId);
    for (const [id, n] of nodeInfo) if (n.runId === runId) nodeInfo.delete(id);
  };
  /** the reads of an adopted run, columns named as they are read back (either dialect's raw rows) */
  const adoptQueries = (runId: string, nodeIds: readonly string[]) => {
    // the input as its JSON text (PostgreSQL's json column would come back parsed)
    const input = db.dialect === 'pg' ? sql`${runs.input}::text` : sql`${runs.input}`;
    const indexed = exists(
      q
        .select({ one: sql`1` })
        .from(searchDocs)
        .where(and(eq(searchDocs.runId, runs.id), eq(searchDocs.field, 'input'))),
    );
    const head = q
      .select({
        kind: sql`${runs.kind}`.as('kind'),
        startedAt: sql`${runs.startedAt}`.as('started_at'),
        startedBy: sql`${runs.startedBy}`.as('started_by'),
        input: input.as('input'),
        indexed: sql`case when ${indexed} then 1 else 0 end`.as('indexed'),
      })
      .from(runs)
      .where(eq(runs.id, runId))
      .toSQL();
    const nodes = q
      .select({ id: sql`${nodeRuns.id}`.as('id'), agent: sql`${nodeRuns.agent}`.as('agent'), startedAt: sql`${nodeRuns.startedAt}`.as('started_at') })
      .from(nodeRuns)
      .where(inArray(nodeRuns.id, [...nodeIds]))
      .toSQL();
    return { head, nodes };
  };
  const learnAdopted = (runId: string, head: Record<string, unknown> | undefined, nodes: Record<string, unknown>[]) => {
    const run = runInfo.get(runId);
    if (!run || !head) return;
    run.kind = head.kind as RunKind;
    run.startedAt = Number(head.started_at);
    run.caller = budgetCaller(head.started_by as string | null);
    if (!Number(head.indexed) && typeof head.input === 'string') run.inputDoc = valueSearchText(JSON.parse(head.input));
    for (const row of nodes) {
      const n = nodeInfo.get(String(row.id));
      if (!n) continue;
      n.agent = String(row.agent);
      n.startedAt = row.started_at === null ? null : Number(row.started_at);
    }
  };
  /** a storage failure has been reported (to a run or a waiter): later ones are not printed again */
  let toldStorage = false;
  /** runs whose lease was lost: nothing more of theirs is written */
  const lost = new Set<string>();
  // per transaction: runs whose fence was checked (true = still ours), and runs refused
  let fenced = new Map<string, boolean>();
  let refused = new Set<string>();
  // SQLite checks a run's fence when the transaction first meets one of its facts. A fence changes
  // only by another connection's commit (a take-over, or a sweep, runs in another process; this
  // process's own sweep leaves the runs it holds alone), so a fence read or written once stays
  // confirmed while PRAGMA data_version — which moves with every other connection's commit, never
  // with this one's — reads as it did: read once per commit, inside its transaction, it spares the
  // check of each run (one statement per run per commit).
  const fences =
    db.dialect === 'sqlite'
      ? (() => {
          const { runs: r } = db.t;
          const P = sql.placeholder;
          const st = valueStatement(
            db.$client,
            db.q
              .select({ id: r.id })
              .from(r)
              .where(and(eq(r.id, P('runId')), eq(r.owner, P('owner')), eq(r.fence, P('fence')))),
            ['runId', 'owner', 'fence'],
          );
          const version = db.$client.prepare('PRAGMA data_version').pluck();
          let seen: unknown = null;
          /** run id → the lease (owner, fence) its row was confirmed under */
          const confirmed = new Map<string, string>();
          const key = (l: Lease) => `${l.owner} ${l.fence}`;
          return {
            /** at the start of a commit, in its transaction: another connection committed since the last one — every fence is read again */
            begin: () => {
              const v = version.get();
              if (v !== seen) confirmed.clear();
              seen = v;
            },
            holds: (l: Lease) => {
              if (confirmed.get(l.runId) === key(l)) return true;
              const ok = st.get(l.runId, l.owner, l.fence) !== undefined;
              if (ok) confirmed.set(l.runId, key(l));
              return ok;
            },
            /** the run's row was just written under `l` in this commit */
            wrote: (l: Lease) => confirmed.set(l.runId, key(l)),
            /** the run is over here (ended, handed back, lost) */
            forget: (runId: string) => confirmed.delete(runId),
          };
        })()
      : null; // PostgreSQL checks every run of a commit before it writes (fencePg)
  const holds = (l: Lease) => fences?.holds(l) ?? false;
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
      const built = orm
        .select({ id: r.id, owner: r.owner, fence: r.fence })
        .from(r)
        .where(inArray(r.id, mine))
        .orderBy(sql`${r.id} collate "C"`)
        .toSQL();
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
  /** PostgreSQL: the adopted runs of a commit read first (their kind, input, open nodes' agents), then the fences */
  const beforePg = async (ids: string[], orm: Orm, client: pg.PoolClient): Promise<Map<string, boolean>> => {
    for (const id of ids) {
      const nodeIds = unread.get(id);
      if (!nodeIds) continue;
      const run = adoptQueries(id, nodeIds);
      const [head, nodes] = await Promise.all([
        client.query<Record<string, unknown>>(run.head.sql, run.head.params),
        nodeIds.length ? client.query<Record<string, unknown>>(run.nodes.sql, run.nodes.params) : null,
      ]);
      learnAdopted(id, head.rows[0], nodes?.rows ?? []);
      unread.delete(id);
    }
    return fencePg(ids, orm, client);
  };
  const drain = (batch: Fact[]) => {
    fences?.begin();
    sums.clear();
    spend.clear();
    for (const f of batch) {
      if (f.runId !== null && !ours(f.runId)) refused.add(f.runId);
      else f.write();
    }
    writeSums();
    writeSpend();
  };
  /** the commit's spend, one upsert per caller and day, in key order (two commits lock shared rows in the same order) */
  const writeSpend = () => {
    for (const key of [...spend.keys()].sort()) {
      const [caller, day] = key.split('\u0000') as [string, string];
      s.callerSpend.run(caller, day, spend.get(key)!);
    }
    spend.clear();
  };
  /** the commit's daily sums, one upsert per key, last in the commit: the rows other writers share are locked the shortest time */
  const writeSums = () => {
    if (sums.empty) return;
    const { agents, nodes, failures } = sums.rows();
    for (const r of agents) s.agentDaily.run(r.agent, r.day, r.model, r.outcome, r.cause, r.action, r.attempts, r.inputTokens, r.outputTokens, r.costUsd, r.durationMs);
    for (const r of nodes) s.nodeDaily.run(r.agent, r.day, r.status, r.nodes, r.lastStartedAt);
    for (const r of failures) s.failureDaily.run(r.sig, r.day, r.level, r.agent, r.model, r.code, r.message, r.failures, r.costUsd, r.firstAt, r.lastAt);
    sums.clear();
  };
  /** tells a run its facts were refused (the lease is gone: stop renewing) or could not be written (kept: it may still finish) */
  const tell = (runId: string, err: Error) => {
    const f = onLost.get(runId);
    onLost.delete(runId);
    if (err instanceof LeaseLostError) {
      lost.add(runId); // nothing more of it is written
      leases.delete(runId);
      keeper.drop(runId);
      forget(runId);
    }
    f?.(err);
  };
  const settle = (ws: Waiter[]) => ws.forEach((w) => (w.runId !== null && lost.has(w.runId) ? w.reject(new LeaseLostError(w.runId, path)) : w.resolve()));
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
    let batch: Fact[];
    if (all) {
      batch = queue;
      queue = [];
    } else {
      const durableRuns = new Set(ws.map((w) => w.runId));
      const kept: Fact[] = [];
      batch = [];
      for (const f of queue) (f.runId === null || durableRuns.has(f.runId) ? batch : kept).push(f);
      queue = kept;
    }
    if (!queue.length && timer) {
      clearTimeout(timer);
      timer = null;
    }
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
      pending = backend.transaction([...runs], beforePg, () => drain(batch));
    } catch (raw) {
      return failed(raw);
    }
    if (pending) return pending.then(committed, failed);
    committed();
  };
  // SQLite commits synchronously, on the spot; PostgreSQL one commit at a time, in order
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
  const later = (runId: string | null, write: () => void) => {
    queue.push({ runId, write });
    // armed even when a durable point's commit is due: that one may leave this fact queued
    if (!timer) {
      timer = setTimeout(() => void commit(), FLUSH_MS);
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
        immediate ??= setImmediate(() => void commit(false));
      });

  // An attempt whose start is still queued when it finishes is written once, whole: one row
  // insert instead of an insert and an update. `open` tracks what of each attempt is written.
  type StartArgs = Parameters<RunStore['startAttempt']>[0];
  // chunks: stream_chunks rows queued for the attempt (their seq); chunked: some were written
  const open = new Map<string, { start: StartArgs; written: boolean; tries: number; done: boolean; chunks: number; chunked: boolean }>();
  type Open = { start: StartArgs; written: boolean; tries: number; done: boolean; chunks: number; chunked: boolean };
  const startRow = (a: StartArgs) => s.startAttempt.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, a.request, a.startedAt);
  const finishAttempt = durable<[Open, AttemptRecord, boolean, NodeInfo | undefined, RunInfo | undefined]>(
    (st) => st.start.runId,
    (st, a, requestChanged, node, run) => {
      const id = st.start.id;
      const failed = isFailedAttempt(a);
      const agent = node?.agent ?? null;
      const sig = failed && agent !== null ? attemptSignature(agent, { model: a.model, cause: a.cause, errorMessage: a.error?.message ?? null }) : null;
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
        a.reasoningTokens ?? null,
        a.costSource ?? null,
        a.finishedAt,
        sig?.sig ?? null,
      ] as const; // attemptResult's order
      if (st.written) s.finishAttempt.run(...result, requestChanged ? a.request : undefined, id);
      else {
        const b = st.start;
        s.insertAttempt.run(b.id, b.nodeRunId, b.runId, b.seq, b.model, b.chainIndex, b.answerNo, a.request, b.startedAt, ...result);
      }
      for (const t of a.tries.slice(st.written ? st.tries : 0)) insertTry(id, t);
      // the whole text is in streamed_text now (redacted when discarded)
      if (st.chunked) s.dropChunks.run(id);
      if (failed) {
        const body = attemptErrorText(a.error?.message, a.validationErrors);
        if (body) s.searchDoc.run(st.start.runId, st.start.nodeRunId, id, 'error', body, a.finishedAt);
      }
      spent(run, a.usage.costUsd, a.finishedAt);
      if (agent === null || node!.run.kind !== 'flow') return;
      const u = a.usage;
      sums.attempt(agent, {
        model: a.model,
        outcome: a.outcome,
        cause: a.cause,
        action: a.action,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        costUsd: u.costUsd,
        startedAt: a.startedAt,
        finishedAt: a.finishedAt,
      });
      if (sig) sums.failure({ sig, level: 'attempt', agent, model: a.model, code: a.cause ?? '', costUsd: u.costUsd, at: a.startedAt });
    },
  );
  const interruptAttempt = durable<[Open, Parameters<RunStore['interruptAttempt']>[1], RunInfo | undefined]>(
    (st) => st.start.runId,
    (st, a, run) => {
      if (!st.written) startRow(st.start); // its queued start was lost with a failed commit
      st.written = true;
      s.interruptAttempt.run(a.message, a.streamedText, a.usage.inputTokens, a.usage.outputTokens, a.usage.costUsd, a.usageUnknown, a.finishedAt, st.start.id);
      spent(run, a.usage.costUsd, a.finishedAt);
      if (st.chunked) s.dropChunks.run(st.start.id); // its text is in streamed_text now
      st.done = true;
    },
  );
  type InsertRunArgs = Parameters<RunStore['insertRun']>[0] & { lease: Lease };
  const insertRun = durable(
    (_r: InsertRunArgs) => null, // the lease's acquisition: nothing to check yet
    (r: InsertRunArgs) => {
      const { lease } = r;
      const input = jsonText(r.input);
      s.insertRun.run(
        r.id,
        r.project,
        r.flow,
        input,
        process.pid,
        lease.owner,
        lease.fence,
        lease.expiresAt - LEASE_TTL_MS,
        lease.expiresAt,
        r.snapshotId ?? null,
        r.projectHash ?? null,
        r.startedBy ?? null,
        r.kind ?? 'flow',
        r.replayOf ?? null,
        r.replayNode ?? null,
        r.startedAt,
      );
      fenced.set(r.id, true); // the row was just written with our lease
      fences?.wrote(lease);
      const body = valueSearchText(r.input, input);
      if (body) s.searchDoc.run(r.id, null, null, 'input', body, r.startedAt);
    },
  );
  type FinishRunArgs = Parameters<RunStore['finishRun']>[0];
  const finishRun = durable(
    (r: FinishRunArgs) => r.id,
    (r: FinishRunArgs) =>
      s.finishRun.run(
        r.status,
        r.output,
        r.error?.code ?? null,
        r.error?.node ?? null,
        r.error?.message ?? null,
        r.error?.hint ?? null,
        r.turns,
        r.usage.inputTokens,
        r.usage.outputTokens,
        r.usage.costUsd,
        r.finishedAt,
        r.id,
      ),
  );
  const store: RunStore = {
    insertRun: (r) => {
      const lease = r.lease ?? newLease(r.id, Date.now());
      leases.set(r.id, lease);
      inserting.add(r.id);
      runInfo.set(r.id, { kind: r.kind ?? 'flow', startedAt: r.startedAt, inputDoc: null, caller: budgetCaller(r.startedBy) });
      const lostHandler = r.onLost;
      if (lostHandler) onLost.set(r.id, lostHandler);
      return insertRun({ ...r, lease }).then(
        () => keeper.hold(lease, (err) => tell(r.id, err)),
        (err: unknown) => {
          leases.delete(r.id);
          inserting.delete(r.id);
          onLost.delete(r.id);
          runInfo.delete(r.id);
          fences?.forget(r.id); // its row was rolled back
          throw err;
        },
      );
    },
    adoptRun: (r) => {
      leases.set(r.id, r.lease);
      lost.delete(r.id);
      if (r.onLost) onLost.set(r.id, r.onLost);
      // its kind, start and input, and its open nodes' agents, are read once (SQLite at once; PostgreSQL before its next commit)
      const run: RunInfo = { kind: null, startedAt: 0, inputDoc: null, caller: null };
      runInfo.set(r.id, run);
      const nodeIds = r.nodeRunIds ?? [];
      for (const n of nodeIds) nodeInfo.set(n, { runId: r.id, run, agent: null, startedAt: null });
      if (db.dialect === 'sqlite') {
        const { head, nodes } = adoptQueries(r.id, nodeIds);
        const c = db.$client;
        learnAdopted(
          r.id,
          c.prepare(head.sql).get(head.params) as Record<string, unknown> | undefined,
          nodeIds.length ? (c.prepare(nodes.sql).all(nodes.params) as Record<string, unknown>[]) : [],
        );
      } else unread.set(r.id, nodeIds);
      // a claimed queued run's input was never indexed (its row was enqueued, not inserted here)
      later(r.id, () => {
        if (run.inputDoc !== null) s.searchDoc.run(r.id, null, null, 'input', run.inputDoc, run.startedAt);
        run.inputDoc = null;
      });
      keeper.hold(r.lease, (err) => tell(r.id, err));
    },
    releaseRun: async (id, now) => {
      // the closing facts first: the next owner must find them committed
      await commit();
      const lease = leases.get(id);
      leases.delete(id);
      onLost.delete(id);
      keeper.drop(id);
      forget(id);
      const ours = !!lease && !lost.has(id);
      lost.add(id); // a late fact of the run is refused, not written unfenced
      return ours && releaseLease(db, lease, now);
    },
    finishRun: (r) => {
      turnsDue.delete(r.id); // the run's end writes its turns
      return finishRun(r).finally(() => {
        // the run is over: its lease is no longer renewed (its status frees it for sweeps)
        leases.delete(r.id);
        onLost.delete(r.id);
        keeper.drop(r.id);
        runInfo.delete(r.id);
        fences?.forget(r.id);
      });
    },
    // one queued write per run carries its latest turn count; none once the run's end (which writes it) is queued
    setRunTurns: (id, turns) => {
      const queued = turnsDue.has(id);
      turnsDue.set(id, turns);
      if (queued) return;
      later(id, () => {
        const due = turnsDue.get(id);
        turnsDue.delete(id);
        if (due !== undefined) s.setRunTurns.run(due, id);
      });
    },
    insertNode: (n) => {
      // a run this store did not insert or adopt is fenced as before, and fed into no sum
      const run = runInfo.get(n.runId) ?? { kind: null, startedAt: n.startedAt ?? 0, inputDoc: null, caller: null };
      const row: NodeRow = { written: false, end: null };
      if (n.status === 'running') nodeInfo.set(n.id, { runId: n.runId, run, agent: n.agent, startedAt: n.startedAt, row });
      later(n.runId, () => {
        row.written = true;
        if (row.end) return s.insertEndedNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.ord, n.policy, n.startedAt, ...row.end);
        s.insertNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.ord, n.status, n.policy, n.startedAt, n.status === 'skipped' ? n.startedAt : null);
        // a skipped node is final from its first row
        if (n.status === 'skipped' && run.kind === 'flow') sums.node(n.agent, 'skipped', n.startedAt ?? run.startedAt, n.startedAt);
      });
    },
    finishNode: (n) => {
      const node = nodeInfo.get(n.id);
      nodeInfo.delete(n.id);
      const runId = node?.runId ?? null;
      const agent = node?.agent ?? null;
      const sig = n.status === 'failed' && n.error && agent !== null ? nodeSignature(agent, n.error) : null;
      const output = jsonText(n.output);
      const end = [
        n.status,
        output,
        n.error?.code ?? null,
        n.error?.message ?? null,
        n.error?.hint ?? null,
        n.usage.inputTokens,
        n.usage.outputTokens,
        n.usage.costUsd,
        n.finishedAt,
        sig?.sig ?? null,
      ] as const; // nodeEnd's order
      // a row still queued is written whole where it was queued
      const row = node?.row && !node.row.written ? node.row : null;
      if (row) row.end = end;
      later(runId, () => {
        if (!row) s.finishNode.run(...end, n.id);
        if (runId === null) return;
        const body = n.status === 'succeeded' ? valueSearchText(n.output, output) : n.error?.message ? capSearchBody(n.error.message) : null;
        if (body) s.searchDoc.run(runId, n.id, null, n.status === 'succeeded' ? 'output' : 'error', body, n.finishedAt);
        if (agent === null || node!.run.kind !== 'flow') return;
        const at = node!.startedAt ?? n.finishedAt;
        sums.node(agent, n.status, at, node!.startedAt);
        if (sig) sums.failure({ sig, level: 'node', agent, model: '', code: n.error!.code, costUsd: n.usage.costUsd, at });
      });
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
      return finishAttempt(st, a, requestChanged, nodeInfo.get(st.start.nodeRunId), runInfo.get(st.start.runId));
    },
    interruptAttempt: (id, a) => {
      const st = open.get(id);
      if (!st) return Promise.resolve(); // it finished after all
      open.delete(id);
      return interruptAttempt(st, a, runInfo.get(st.start.runId));
    },
    // the gate's interface is synchronous, and a pause is rare: commit it on the spot
    setPause: (model, until, reason, origin) => {
      later(null, () => s.setPause.run(model, until, reason, origin?.setAt ?? null, origin?.serverWait ?? null, origin?.askedMs ?? null, origin?.maxWaitMs ?? null));
      const committed = commit();
      cluster?.noteOwnPause(model, until, committed);
    },
    getPause: (model) => (readPause ? readPause(model) : (cluster?.get(model) ?? null)),
    refreshPauses: async () => {
      await cluster?.refresh();
    },
    ...(cluster && { clusterPauses: cluster }),
    flush: () => commit().then(() => backend.afterFlush()),
  };
  cache.set(db, store);
  return store;
}

/**
 * Closes the attempts a dead process cut off in run `runId` (DESIGN: Storage): each never got an
 * outcome; it is marked discarded (it produced no output) with the interrupted error and the dead
 * owner's last sign of life as its end (`cutOffAt`: `lastSeenAt`, not `now`, never before its start),
 * its usage as recorded kept, and its streamed text — the stream_chunks rows, redacted as
 * they were written, after any text a version before them stored in streamed_text, raw — joined,
 * redacted, capped and put in streamed_text; the rows go. Runs inside the caller's transaction
 * (`q`): the sweep that marks a run interrupted (SQLite) and a worker's take-over (PostgreSQL).
 */
export async function closeCutOffAttempts(db: Db, q: Orm, runId: string, lastSeenAt: number | null, now: number): Promise<number> {
  const { attempts, streamChunks } = db.t;
  const cut = await q
    .select({ id: attempts.id, text: attempts.streamedText, startedAt: attempts.startedAt })
    .from(attempts)
    .where(and(eq(attempts.runId, runId), isNull(attempts.outcome), isNull(attempts.finishedAt)));
  const why = INTERRUPTED_ATTEMPT_ERROR;
  for (const a of cut) {
    const chunks = await q.select({ text: streamChunks.text }).from(streamChunks).where(eq(streamChunks.attemptId, a.id)).orderBy(asc(streamChunks.seq));
    const text = (a.text ?? '') + chunks.map((r) => r.text).join('');
    await q
      .update(attempts)
      .set({
        streamedText: text ? capFailureText(redact(text)) : null,
        discarded: true,
        errorKind: why.kind,
        errorMessage: why.message,
        finishedAt: cutOffAt(lastSeenAt, now, a.startedAt),
      })
      .where(eq(attempts.id, a.id));
    await q.delete(streamChunks).where(eq(streamChunks.attemptId, a.id));
  }
  return cut.length;
}

/**
 * Fails the nodes of run `runId` still running or pending when its process died (the sweep,
 * markInterrupted), with `error` and the time the dead owner was last seen alive as their end (`cutOffAt`,
 * never before a node's start): each signed, its text searchable and —
 * in a `flow` run — counted in node_daily and failure_daily, as a node failed by its own run is.
 * Runs inside the caller's transaction (`q`).
 */
export async function failCutOffNodes(
  db: Db,
  q: Orm,
  runId: string,
  error: { code: string; message: string; hint: string },
  lastSeenAt: number | null,
  now: number,
): Promise<number> {
  const { nodeRuns, runs, searchDocs } = db.t;
  const open = await q
    .select({ id: nodeRuns.id, agent: nodeRuns.agent, startedAt: nodeRuns.startedAt, costUsd: nodeRuns.costUsd })
    .from(nodeRuns)
    .where(and(eq(nodeRuns.runId, runId), inArray(nodeRuns.status, ['running', 'pending'])));
  if (!open.length) return 0;
  const [run] = await q.select({ kind: runs.kind }).from(runs).where(eq(runs.id, runId));
  const sums = new DailySums();
  for (const n of open) {
    const sig = nodeSignature(n.agent, error);
    const end = cutOffAt(lastSeenAt, now, n.startedAt);
    await q
      .update(nodeRuns)
      .set({ status: 'failed', errorCode: error.code, errorMessage: error.message, hint: error.hint, finishedAt: end, failureSig: sig.sig })
      .where(eq(nodeRuns.id, n.id));
    await q.insert(searchDocs).values({ runId, nodeRunId: n.id, field: 'error', body: capSearchBody(error.message), at: end });
    if (run?.kind !== 'flow') continue;
    const at = n.startedAt ?? end;
    sums.node(n.agent, 'failed', at, n.startedAt);
    sums.failure({ sig, level: 'node', agent: n.agent, model: '', code: error.code, costUsd: n.costUsd, at });
  }
  await writeDailySums(db, q, sums);
  return open.length;
}
