// The run store's statements (DESIGN: Storage, "Typed statements"), built once per connection with
// drizzle over `db.t` and bound BY NAME (db/typed-sql.ts): each statement's `run(values)` takes one
// value per placeholder, named after its column and typed as the table's insert type has it, so a
// misspelt column, a missing one or a value of another column's type does not compile. PostgreSQL
// runs the same statements over db/schema-pg.ts's tables (proved identical by
// db/schema-dialects.test.ts; their insert types by db/run-store/statements.test.ts).
import { and, eq, isNull, sql } from 'drizzle-orm';
import { agentDailyUpsert, failureDailyUpsert, nodeDailyUpsert } from '../run-aggregates';
import { callerSpendUpsert } from '../spend-queries';
import { bindAll, bindColumns, bindValues, excluded, placeholders, type Binding, type BuiltQuery } from '../typed-sql';
import type { Orm, Tables } from '../types';

/** A statement of the store, bound and run by the dialect: `run(values)` takes a value per placeholder, by name. */
export interface Stmt<V> {
  run(values: V): void;
}

/** how a dialect prepares a statement (db/run-store/backends.ts) */
export type Prepare = <V>(query: BuiltQuery, binding: Binding<V>) => Stmt<V>;

/** the values a statement of `s` takes */
export type ValuesOf<S> = S extends Stmt<infer V> ? V : never;

const P = sql.placeholder;

// the columns each statement writes (an update's row is named by its `id`)
const attemptStart = ['id', 'nodeRunId', 'runId', 'seq', 'model', 'chainIndex', 'answerNo', 'request', 'startedAt'] as const;
const attemptResult = [
  ...(['outcome', 'finishReason', 'nativeFinishReason', 'finishNote', 'cause', 'action', 'responseText', 'errorKind', 'errorMessage', 'errorDetail'] as const),
  ...(['validationErrors', 'discarded', 'streamedText', 'inputTokens', 'outputTokens', 'costUsd', 'usageUnknown', 'reasoningTokens', 'costSource'] as const),
  ...(['finishedAt', 'failureSig', 'inFlightTry', 'inFlightAt', 'inFlightGeneration'] as const),
] as const;
/** write-ahead (DESIGN: Storage, "Write-ahead"): the try about to be sent */
const inFlight = ['inFlightTry', 'inFlightAt'] as const;
const runStart = [
  ...(['id', 'project', 'flow', 'pid', 'owner', 'fence', 'heartbeatAt', 'leaseExpiresAt'] as const),
  ...(['snapshotId', 'projectHash', 'startedBy', 'kind', 'replayOf', 'replayNode', 'startedAt', 'traceId', 'traceparent'] as const),
] as const;
const runEnd = ['status', 'output', 'errorCode', 'errorNode', 'errorMessage', 'errorHint', 'turns', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt'] as const;
const attemptCut = ['errorMessage', 'streamedText', 'inputTokens', 'outputTokens', 'costUsd', 'usageUnknown', 'finishedAt'] as const;
const nodeStart = ['id', 'runId', 'nodeId', 'agent', 'turn', 'ord', 'status', 'policy', 'startedAt', 'finishedAt'] as const;
/** a node row's columns that its end does not write */
const nodeHead = ['id', 'runId', 'nodeId', 'agent', 'turn', 'ord', 'policy', 'startedAt'] as const;
/** a node's end but its output, which goes as the JSON text made once (the same text is searched) */
const nodeEnd = ['status', 'errorCode', 'errorMessage', 'hint', 'inputTokens', 'outputTokens', 'costUsd', 'finishedAt', 'failureSig'] as const;
const chunk = ['attemptId', 'seq', 'text'] as const;
const tryRow = [
  ...(['attemptId', 'tryNo', 'status', 'error', 'retryAfterMs', 'waitedMs', 'discardedText'] as const),
  ...(['startedAt', 'finishedAt', 'generationId', 'usageLookup', 'lookupAfter'] as const),
] as const;
const pause = ['model', 'pausedUntil', 'reason', 'setAt', 'serverWait', 'askedMs', 'maxWaitMs'] as const;
const doc = ['runId', 'nodeRunId', 'attemptId', 'field', 'body', 'at'] as const;
const agentDay = ['agent', 'day', 'model', 'outcome', 'cause', 'action', 'attempts', 'inputTokens', 'outputTokens', 'costUsd', 'durationMs'] as const;
const nodeDay = ['agent', 'day', 'status', 'nodes', 'lastStartedAt'] as const;
const failureDay = ['sig', 'day', 'level', 'agent', 'model', 'code', 'message', 'failures', 'costUsd', 'firstAt', 'lastAt'] as const;
const spendRow = ['caller', 'day', 'usd'] as const;

/** a JSON value as the text made once by the caller (`jsonText`): written as it is, not encoded again */
const jsonAs = <const K extends string>(name: K) => bindValues<Record<K, string | null>>(name);
const raw = (name: string) => sql`${P(name)}`;

function runStatements(q: Orm, { runs }: Tables, w: Prepare) {
  return {
    // the input goes as JSON text made once: the same text is searched (a large value is not stringified twice)
    insertRun: w(q.insert(runs).values({ ...placeholders(runs, runStart), input: raw('input'), status: 'running' }), bindAll(bindColumns(runs, runStart), jsonAs('input'))),
    finishRun: w(
      q
        .update(runs)
        .set(placeholders(runs, runEnd))
        .where(eq(runs.id, P('id'))),
      bindColumns(runs, [...runEnd, 'id']),
    ),
    setRunTurns: w(
      q
        .update(runs)
        .set(placeholders(runs, ['turns']))
        .where(eq(runs.id, P('id'))),
      bindColumns(runs, ['turns', 'id']),
    ),
    // an adopted run's trace: the one the process that runs it now opened (DESIGN: Observability, "Traces")
    setRunTrace: w(
      q
        .update(runs)
        .set(placeholders(runs, ['traceId']))
        .where(eq(runs.id, P('id'))),
      bindColumns(runs, ['traceId', 'id']),
    ),
  };
}

function nodeStatements(q: Orm, { nodeRuns }: Tables, w: Prepare) {
  const end = bindAll(bindColumns(nodeRuns, nodeEnd), jsonAs('output'));
  return {
    insertNode: w(q.insert(nodeRuns).values(placeholders(nodeRuns, nodeStart)), bindColumns(nodeRuns, nodeStart)),
    // a node whose start is still queued when it ends: one row, whole (its output JSON text as given, as finishNode's)
    insertEndedNode: w(q.insert(nodeRuns).values({ ...placeholders(nodeRuns, [...nodeHead, ...nodeEnd]), output: raw('output') }), bindAll(bindColumns(nodeRuns, nodeHead), end)),
    finishNode: w(
      q
        .update(nodeRuns)
        .set({ ...placeholders(nodeRuns, nodeEnd), output: raw('output') })
        .where(eq(nodeRuns.id, P('id'))),
      bindAll(end, bindColumns(nodeRuns, ['id'])),
    ),
  };
}

function attemptStatements(q: Orm, { attempts, streamChunks, transportTries }: Tables, w: Prepare) {
  return {
    startAttempt: w(q.insert(attempts).values(placeholders(attempts, [...attemptStart, ...inFlight])), bindColumns(attempts, [...attemptStart, ...inFlight])),
    markInFlight: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, inFlight), inFlightGeneration: null })
        .where(eq(attempts.id, P('id'))),
      bindColumns(attempts, [...inFlight, 'id']),
    ),
    markGeneration: w(
      q
        .update(attempts)
        .set(placeholders(attempts, ['inFlightGeneration']))
        .where(eq(attempts.id, P('id'))),
      bindColumns(attempts, ['inFlightGeneration', 'id']),
    ),
    insertAttempt: w(q.insert(attempts).values(placeholders(attempts, [...attemptStart, ...attemptResult])), bindColumns(attempts, [...attemptStart, ...attemptResult])),
    // `request` is rewritten only when one is given (undefined: NULL, and the stored one is kept)
    finishAttempt: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, attemptResult), request: sql`coalesce(${placeholders(attempts, ['request']).request}, ${attempts.request})` })
        .where(eq(attempts.id, P('id'))),
      bindColumns(attempts, [...attemptResult, 'request', 'id']),
    ),
    interruptAttempt: w(
      q
        .update(attempts)
        .set({ ...placeholders(attempts, attemptCut), errorKind: 'transport', discarded: true, inFlightTry: null, inFlightAt: null, inFlightGeneration: null })
        .where(and(eq(attempts.id, P('id')), isNull(attempts.outcome))),
      bindColumns(attempts, [...attemptCut, 'id']),
    ),
    // one row per batch: appending costs the batch, not the text so far (`streamed_text || ?` copied
    // the whole text on every batch: quadratic). Joined on read; gone when the attempt finishes.
    appendStreamed: w(q.insert(streamChunks).values(placeholders(streamChunks, chunk)), bindColumns(streamChunks, chunk)),
    dropChunks: w(q.delete(streamChunks).where(eq(streamChunks.attemptId, P('attemptId'))), bindColumns(streamChunks, ['attemptId'])),
    insertTry: w(q.insert(transportTries).values(placeholders(transportTries, tryRow)), bindColumns(transportTries, tryRow)),
  };
}

function feedStatements(q: Orm, t: Tables, w: Prepare) {
  const { agentDaily, callerSpend, failureDaily, nodeDaily, searchDocs } = t;
  return {
    searchDoc: w(q.insert(searchDocs).values(placeholders(searchDocs, doc)), bindColumns(searchDocs, doc)),
    // the daily sums add to what is there (ON CONFLICT … SET x = x + excluded.x: concurrent writers on PostgreSQL lose nothing)
    agentDaily: w(q.insert(agentDaily).values(placeholders(agentDaily, agentDay)).onConflictDoUpdate(agentDailyUpsert(t)), bindColumns(agentDaily, agentDay)),
    nodeDaily: w(q.insert(nodeDaily).values(placeholders(nodeDaily, nodeDay)).onConflictDoUpdate(nodeDailyUpsert(t)), bindColumns(nodeDaily, nodeDay)),
    failureDaily: w(q.insert(failureDaily).values(placeholders(failureDaily, failureDay)).onConflictDoUpdate(failureDailyUpsert(t)), bindColumns(failureDaily, failureDay)),
    // what the attempts of a caller's runs cost, per UTC day, against their budget (db/spend-queries.ts)
    callerSpend: w(q.insert(callerSpend).values(placeholders(callerSpend, spendRow)).onConflictDoUpdate(callerSpendUpsert(t)), bindColumns(callerSpend, spendRow)),
  };
}

function pauseStatements(q: Orm, { rateLimitPauses: p }: Tables, w: Prepare) {
  return {
    // a later pause wins: the row is replaced only by a pause that ends later
    setPause: w(
      q
        .insert(p)
        .values(placeholders(p, pause))
        .onConflictDoUpdate({
          target: p.model,
          set: {
            pausedUntil: excluded(p.pausedUntil),
            reason: excluded(p.reason),
            setAt: excluded(p.setAt),
            serverWait: excluded(p.serverWait),
            askedMs: excluded(p.askedMs),
            maxWaitMs: excluded(p.maxWaitMs),
            // a new pause is probed afresh: a claim on the one it replaces is void
            probeOwner: null,
            probeUntil: null,
          },
          setWhere: sql`${excluded(p.pausedUntil)} > ${p.pausedUntil}`,
        }),
      bindColumns(p, pause),
    ),
  };
}

/** every statement of the store, prepared by the dialect (`prepare`) for the connection of `q` */
export function storeStatements(q: Orm, t: Tables, prepare: Prepare) {
  return {
    ...runStatements(q, t, prepare),
    ...nodeStatements(q, t, prepare),
    ...attemptStatements(q, t, prepare),
    ...feedStatements(q, t, prepare),
    ...pauseStatements(q, t, prepare),
  };
}

export type Statements = ReturnType<typeof storeStatements>;
