// Reads of the run history. Pages, routes and the CLI read through these functions only (the run
// record built from a run's facts is lib/flow's: getRunRecord in lib/flow/stored-run.ts).
import { and, asc, count, desc, eq, exists, gt, gte, inArray, isNotNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { AttemptRecord, NodePolicy } from '@/lib/engine/types';
import { ATTEMPT_CAUSES } from '@/lib/shared/run-list-values';
import type { AttemptRow, RunRow, TransportTryRow } from './schema';
import type { AttemptFacts, Db, NodeFacts, RunFacts, RunStatus } from './types';

// Map.groupBy arrives in Node 21; the machines run Node 20
function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}

/**
 * Who started a run and the project it ran under (DESIGN: Storage, The run record): `runs.started_by`
 * (a user's name, `token:<name>`, `cli:<login>`), `runs.project_hash` (sha256 of the project's
 * files) and `runs.snapshot_id` (PostgreSQL mode); null in rows written before they were kept, or
 * when nobody is known (a dashboard without accounts).
 */
export interface RunOrigin {
  startedBy: string | null;
  projectHash: string | null;
  snapshotId: number | null;
}

/**
 * What kind of run it is (DESIGN: The run record): `runs.kind`, and for a replay the run and node it
 * replays (`runs.replay_of`, `runs.replay_node`; replayOf null once the original was purged).
 */
export interface RunLink {
  kind: RunKind;
  replayOf: string | null;
  replayNode: string | null;
}

/**
 * The trace a run's spans are in (DESIGN: Observability, "Traces"): `runs.trace_id`, and the caller's
 * W3C traceparent the run continues (`runs.traceparent`, kept for the worker that runs it); null when none.
 */
export interface RunTrace {
  traceId: string | null;
  traceparent: string | null;
}

/**
 * Every stored fact of one run, nodes in the order the run record lists them — by turn (turn 0,
 * the nodes never reached, last), then their place in the flow (`ord`; 0 in rows written before it
 * was kept), then start and id; null when there is no such run.
 */
export async function getRunFacts(db: Db, id: string): Promise<(RunFacts & RunOrigin & RunLink & RunTrace) | null> {
  const { attempts, nodeRuns, runs, streamChunks, transportTries } = db.t;
  const run = (await db.q.select().from(runs).where(eq(runs.id, id)).limit(1))[0];
  if (!run) return null;
  const nodes = await db.q
    .select()
    .from(nodeRuns)
    .where(eq(nodeRuns.runId, id))
    // turn 0 (never reached) after every turn; a NULL start after the others on both dialects,
    // whose NULLs sort apart
    .orderBy(sql`case when ${nodeRuns.turn} = 0 then 1 else 0 end`, asc(nodeRuns.turn), asc(nodeRuns.ord), sql`${nodeRuns.startedAt} asc nulls last`, asc(nodeRuns.id));
  const atts = await db.q.select().from(attempts).where(eq(attempts.runId, id)).orderBy(asc(attempts.seq), asc(attempts.id));
  const tries = atts.length
    ? await db.q
        .select()
        .from(transportTries)
        .where(
          inArray(
            transportTries.attemptId,
            atts.map((a) => a.id),
          ),
        )
        .orderBy(asc(transportTries.tryNo), asc(transportTries.id))
    : [];
  const triesOf = groupBy(tries, (t) => t.attemptId);
  // an attempt in flight has its streamed text in stream_chunks (DESIGN: Storage), joined here
  const inFlight = atts.filter((a) => a.finishedAt == null && a.streamedText == null);
  if (inFlight.length) {
    const chunks = await db.q
      .select({ attemptId: streamChunks.attemptId, text: streamChunks.text })
      .from(streamChunks)
      .where(
        inArray(
          streamChunks.attemptId,
          inFlight.map((a) => a.id),
        ),
      )
      .orderBy(asc(streamChunks.attemptId), asc(streamChunks.seq));
    const textOf = groupBy(chunks, (c) => c.attemptId);
    for (const a of inFlight) {
      const parts = textOf.get(a.id);
      if (parts) a.streamedText = parts.map((c) => c.text).join('');
    }
  }
  const attemptsOf = groupBy(atts, (a) => a.nodeRunId);
  return {
    id: run.id,
    flow: run.flow,
    status: run.status,
    input: run.input,
    output: run.output,
    error: run.errorCode ? { code: run.errorCode, node: run.errorNode, message: run.errorMessage ?? '', hint: run.errorHint } : null,
    turns: run.turns,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    startedBy: run.startedBy,
    projectHash: run.projectHash,
    snapshotId: run.snapshotId,
    kind: run.kind,
    replayOf: run.replayOf,
    replayNode: run.replayNode,
    traceId: run.traceId,
    traceparent: run.traceparent,
    nodes: nodes.map((n): NodeFacts => ({
      id: n.nodeId,
      agent: n.agent,
      turn: n.turn,
      status: n.status,
      output: n.output,
      error: n.errorCode ? { code: n.errorCode, message: n.errorMessage ?? '', hint: n.hint ?? '' } : null,
      policy: (n.policy as NodePolicy | null) ?? null,
      attempts: (attemptsOf.get(n.id) ?? []).map((a) => attemptFacts(a, triesOf.get(a.id) ?? [])),
      startedAt: n.startedAt,
      finishedAt: n.finishedAt,
    })),
  };
}

function attemptFacts(a: AttemptRow, tries: TransportTryRow[]): AttemptFacts {
  return {
    seq: a.seq,
    model: a.model,
    chainIndex: a.chainIndex,
    answerNo: a.answerNo,
    outcome: a.outcome,
    finishReason: a.finishReason,
    nativeFinishReason: a.nativeFinishReason,
    ...(a.finishNote !== null && { finishNote: a.finishNote }),
    cause: a.cause as AttemptRecord['cause'],
    action: (a.action ?? 'none') as AttemptRecord['action'],
    request: (a.request as AttemptRecord['request']) ?? [],
    responseText: a.responseText,
    error: a.errorKind ? { kind: a.errorKind as NonNullable<AttemptRecord['error']>['kind'], message: a.errorMessage ?? '', detail: a.errorDetail } : null,
    validationErrors: (a.validationErrors as AttemptRecord['validationErrors']) ?? [],
    discarded: a.discarded,
    streamedText: a.streamedText,
    usage: { inputTokens: a.inputTokens, outputTokens: a.outputTokens, costUsd: a.costUsd },
    ...(a.usageUnknown && { usageUnknown: true }),
    ...(a.reasoningTokens !== null && { reasoningTokens: a.reasoningTokens }),
    costSource: a.costSource as AttemptRecord['costSource'],
    startedAt: a.startedAt,
    finishedAt: a.finishedAt,
    tries: tries.map((t) => ({
      tryNo: t.tryNo,
      status: t.status,
      error: t.error as AttemptRecord['tries'][number]['error'],
      retryAfterMs: t.retryAfterMs,
      waitedMs: t.waitedMs,
      discardedText: t.discardedText,
      ...(t.usageLookup !== null && { generationId: t.generationId, usageLookup: t.usageLookup }),
      startedAt: t.startedAt,
      finishedAt: t.finishedAt,
    })),
  };
}

export interface RunFilters {
  status?: RunStatus;
  flow?: string;
  agent?: string;
  model?: string;
  cause?: string;
  retried?: boolean;
  fellBack?: boolean;
  from?: number;
  to?: number;
  /** flow, replay or limits; absent: every kind (a replay is listed with its mark) */
  kind?: RunKind;
}

/** flow: a run of a flow, counted in every statistic; replay and limits runs are recorded and searchable, never counted */
export type RunKind = RunRow['kind'];

export interface RunListItem {
  id: string;
  flow: string;
  status: RunStatus;
  errorCode: string | null;
  errorNode: string | null;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  startedAt: number;
  finishedAt: number | null;
  attempts: number;
  kind: RunKind;
  /** a replay's original run; null for another kind, or once the original was purged */
  replayOf: string | null;
  replayNode: string | null;
  /** the run succeeded although a node of it failed: an on_fail route went around that node */
  routedAround: boolean;
}

/** Opaque cursor: the last row's (started_at, id), newest first. */
export function encodeCursor(r: { startedAt: number; id: string }): string {
  return Buffer.from(`${r.startedAt}:${r.id}`).toString('base64url');
}

/** A cursor from encodeCursor, decoded; null for anything else (base64url decodes any string, so the round trip is checked). */
export function decodeCursor(c: string): { startedAt: number; id: string } | null {
  const [t, ...rest] = Buffer.from(c, 'base64url').toString().split(':');
  if (!t || !/^\d+$/.test(t) || !rest.length) return null;
  const cur = { startedAt: Number(t), id: rest.join(':') };
  return cur.id && encodeCursor(cur) === c ? cur : null;
}

/** A `cursor` that no page of the run list handed out: answered as a bad request, never ignored. */
export class InvalidCursorError extends Error {
  constructor(readonly cursor: string) {
    super(
      `cursor "${cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor}" is not one this list handed out; use the nextCursor of a previous page, or leave cursor out for the newest runs`,
    );
    this.name = 'InvalidCursorError';
  }
}

/** One page of the run list, newest first: at most `limit` runs after `cursor` (keyset on (started_at, id)). */
export async function listRuns(db: Db, opts: { filters?: RunFilters; limit?: number; cursor?: string | null } = {}): Promise<{ items: RunListItem[]; nextCursor: string | null }> {
  const { attempts, nodeRuns, runs } = db.t;
  const f = opts.filters ?? {};
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  const where: (SQL | undefined)[] = [];
  if (f.status) where.push(eq(runs.status, f.status));
  if (f.flow) where.push(eq(runs.flow, f.flow));
  if (f.kind) where.push(eq(runs.kind, f.kind));
  if (f.from != null) where.push(gte(runs.startedAt, f.from));
  if (f.to != null) where.push(lte(runs.startedAt, f.to));
  if (f.agent)
    where.push(
      exists(
        db.q
          .select({ one: sql`1` })
          .from(nodeRuns)
          .where(and(eq(nodeRuns.runId, runs.id), eq(nodeRuns.agent, f.agent))),
      ),
    );
  const attemptWhere = (cond: SQL) =>
    exists(
      db.q
        .select({ one: sql`1` })
        .from(attempts)
        .where(and(eq(attempts.runId, runs.id), cond)),
    );
  if (f.model) where.push(attemptWhere(eq(attempts.model, f.model)));
  if (f.cause) where.push(attemptWhere(eq(attempts.cause, f.cause)));
  if (f.retried) where.push(attemptWhere(inArray(attempts.action, ['retry', 'repair'])));
  if (f.fellBack) where.push(attemptWhere(eq(attempts.action, 'fallback')));
  const cur = opts.cursor ? decodeCursor(opts.cursor) : null;
  if (opts.cursor && !cur) throw new InvalidCursorError(opts.cursor);
  if (cur) where.push(or(lt(runs.startedAt, cur.startedAt), and(eq(runs.startedAt, cur.startedAt), lt(runs.id, cur.id))));
  const rows = await db.q
    .select({
      run: runs,
      // $count renders its condition qualified ("attempts"."run_id" = "runs"."id") inside the subquery
      attempts: db.q.$count(attempts, eq(attempts.runId, runs.id)),
      // per row of the page, through node_runs_run_idx; a number on both dialects
      routed: sql<number>`case when ${runs.status} = 'succeeded' and ${exists(
        db.q
          .select({ one: sql`1` })
          .from(nodeRuns)
          .where(and(eq(nodeRuns.runId, runs.id), eq(nodeRuns.status, 'failed'))),
      )} then 1 else 0 end`.mapWith(Number),
    })
    .from(runs)
    .where(and(...where))
    .orderBy(desc(runs.startedAt), desc(runs.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(({ run, attempts: n, routed }) => listItem(run, n, routed === 1));
  const last = page[page.length - 1];
  return { items: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

function listItem(r: RunRow, attemptCount: number, routedAround: boolean): RunListItem {
  return {
    id: r.id,
    flow: r.flow,
    status: r.status,
    errorCode: r.errorCode,
    errorNode: r.errorNode,
    turns: r.turns,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    costUsd: r.costUsd,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    attempts: attemptCount,
    kind: r.kind,
    replayOf: r.replayOf,
    replayNode: r.replayNode,
    routedAround,
  };
}

export async function countRuns(db: Db): Promise<number> {
  const { runs } = db.t;
  return (await db.q.select({ n: count() }).from(runs))[0]?.n ?? 0;
}

/** at most this many values per dropdown */
const CHOICES_MAX = 200;

/**
 * The distinct values of an indexed column, each found by one seek of its index (`min(col) where
 * col > previous`): the cost grows with the values, not with the rows — a `select distinct` read
 * the whole index of every table on each /runs.
 */
async function distinctByIndex(db: Db, col: AnySQLiteColumn<{ data: string }>): Promise<string[]> {
  const out: string[] = [];
  let prev: string | null = null;
  while (out.length < CHOICES_MAX) {
    const [row] = await db.q
      .select({ v: sql<string | null>`min(${col})` })
      .from(col.table)
      .where(prev === null ? isNotNull(col) : gt(col, prev));
    if (row?.v == null) break;
    out.push(row.v);
    prev = row.v;
  }
  return out;
}

/** Values for the run filters' dropdowns: flows, agents and models seen in the history; the fixed causes. */
export async function filterChoices(db: Db): Promise<{ flows: string[]; agents: string[]; models: string[]; causes: string[] }> {
  const { attempts, nodeRuns, runs } = db.t;
  // runs_flow_idx, node_runs_agent_idx, attempts_model_idx lead with these columns
  const [flows, agents, models] = await Promise.all([distinctByIndex(db, runs.flow), distinctByIndex(db, nodeRuns.agent), distinctByIndex(db, attempts.model)]);
  return { flows, agents, models, causes: [...ATTEMPT_CAUSES] };
}
