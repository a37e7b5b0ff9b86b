// Reads of the run history. Pages, routes and the CLI read through these functions only (the run
// record built from a run's facts is lib/flow's: getRunRecord in lib/flow/stored-run.ts).
import { and, asc, count, desc, eq, exists, gte, inArray, isNotNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { AttemptRecord, NodePolicy } from '@/lib/engine/types';
import { attempts, nodeRuns, runs, streamChunks, transportTries, type AttemptRow, type RunRow } from './schema';
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

/** Every stored fact of one run, nodes in the order they started; null when there is no such run. */
export function getRunFacts(db: Db, id: string): RunFacts | null {
  const run = db.select().from(runs).where(eq(runs.id, id)).get();
  if (!run) return null;
  const nodes = db.select().from(nodeRuns).where(eq(nodeRuns.runId, id)).orderBy(sql`rowid`).all();
  const atts = db.select().from(attempts).where(eq(attempts.runId, id)).orderBy(asc(attempts.seq)).all();
  const tries = atts.length
    ? db
        .select()
        .from(transportTries)
        .where(inArray(transportTries.attemptId, atts.map((a) => a.id)))
        .orderBy(asc(transportTries.tryNo))
        .all()
    : [];
  const triesOf = groupBy(tries, (t) => t.attemptId);
  // an attempt in flight has its streamed text in stream_chunks (DESIGN: Storage), joined here
  for (const a of atts) {
    if (a.finishedAt != null || a.streamedText != null) continue;
    const chunks = db.select({ text: streamChunks.text }).from(streamChunks).where(eq(streamChunks.attemptId, a.id)).orderBy(asc(streamChunks.seq)).all();
    if (chunks.length) a.streamedText = chunks.map((c) => c.text).join('');
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
    nodes: nodes.map(
      (n): NodeFacts => ({
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
      }),
    ),
  };
}

function attemptFacts(a: AttemptRow, tries: (typeof transportTries.$inferSelect)[]): AttemptFacts {
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
    startedAt: a.startedAt,
    finishedAt: a.finishedAt,
    tries: tries.map((t) => ({
      tryNo: t.tryNo,
      status: t.status,
      error: t.error as AttemptRecord['tries'][number]['error'],
      retryAfterMs: t.retryAfterMs,
      waitedMs: t.waitedMs,
      discardedText: t.discardedText,
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
}

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
    super(`cursor "${cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor}" is not one this list handed out; use the nextCursor of a previous page, or leave cursor out for the newest runs`);
    this.name = 'InvalidCursorError';
  }
}

export function listRuns(
  db: Db,
  opts: { filters?: RunFilters; limit?: number; cursor?: string | null } = {},
): { items: RunListItem[]; nextCursor: string | null } {
  const f = opts.filters ?? {};
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  const where: (SQL | undefined)[] = [];
  if (f.status) where.push(eq(runs.status, f.status));
  if (f.flow) where.push(eq(runs.flow, f.flow));
  if (f.from != null) where.push(gte(runs.startedAt, f.from));
  if (f.to != null) where.push(lte(runs.startedAt, f.to));
  if (f.agent) where.push(exists(db.select({ one: sql`1` }).from(nodeRuns).where(and(eq(nodeRuns.runId, runs.id), eq(nodeRuns.agent, f.agent)))));
  const attemptWhere = (cond: SQL) => exists(db.select({ one: sql`1` }).from(attempts).where(and(eq(attempts.runId, runs.id), cond)));
  if (f.model) where.push(attemptWhere(eq(attempts.model, f.model)));
  if (f.cause) where.push(attemptWhere(eq(attempts.cause, f.cause)));
  if (f.retried) where.push(attemptWhere(inArray(attempts.action, ['retry', 'repair'])));
  if (f.fellBack) where.push(attemptWhere(eq(attempts.action, 'fallback')));
  const cur = opts.cursor ? decodeCursor(opts.cursor) : null;
  if (opts.cursor && !cur) throw new InvalidCursorError(opts.cursor);
  if (cur) where.push(or(lt(runs.startedAt, cur.startedAt), and(eq(runs.startedAt, cur.startedAt), lt(runs.id, cur.id))));
  const rows = db
    .select({
      run: runs,
      // $count renders its condition qualified ("attempts"."run_id" = "runs"."id") inside the subquery
      attempts: db.$count(attempts, eq(attempts.runId, runs.id)),
    })
    .from(runs)
    .where(and(...where))
    .orderBy(desc(runs.startedAt), desc(runs.id))
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit).map(({ run, attempts: n }) => listItem(run, n));
  const last = page[page.length - 1];
  return { items: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

function listItem(r: RunRow, attemptCount: number): RunListItem {
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
  };
}

export function countRuns(db: Db): number {
  return db.select({ n: count() }).from(runs).get()?.n ?? 0;
}

/** Distinct values for the run filters' dropdowns. */
export function filterChoices(db: Db) {
  const col = (c: AnySQLiteColumn<{ data: string }>) =>
    db
      .selectDistinct({ v: c })
      .from(c.table)
      .where(isNotNull(c))
      .orderBy(asc(c))
      .all()
      .map((r) => r.v as string);
  return { flows: col(runs.flow), agents: col(nodeRuns.agent), models: col(attempts.model), causes: col(attempts.cause) };
}
