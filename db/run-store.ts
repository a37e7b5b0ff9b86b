// Writes of a run as it happens (DESIGN.md §10). Each call is one synchronous SQLite transaction,
// so a fact is durable before the engine acts on it. Prepared statements are made once per
// connection: this is the hot path of every attempt.
import type Database from 'better-sqlite3';
import type { AttemptRecord, NodePolicy, TryRecord, UsageTotals } from '@/lib/engine/types';
import type { Db } from './client';

type Stmt = Database.Statement<unknown[]>;

export interface RunStore {
  insertRun(r: { id: string; project: string; flow: string; input: unknown; startedAt: number }): void;
  finishRun(r: {
    id: string;
    status: 'succeeded' | 'failed';
    output: unknown;
    error: { code: string; node: string | null; message: string; hint: string | null } | null;
    turns: number;
    usage: UsageTotals;
    finishedAt: number;
  }): void;
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
  appendStreamed(attemptId: string, text: string): void;
  insertTry(attemptId: string, t: TryRecord): void;
  finishAttempt(attemptId: string, a: AttemptRecord, triesAlreadyStored: number): void;
  setPause(model: string, pausedUntil: number, reason: string): void;
  getPause(model: string): number | null;
}

const j = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

const cache = new WeakMap<Db, RunStore>();

export function runStore(db: Db): RunStore {
  const hit = cache.get(db);
  if (hit) return hit;
  const c = db.$client;
  const p = (sql: string): Stmt => c.prepare(sql);
  const s = {
    insertRun: p(`INSERT INTO runs (id, project, flow, status, input, pid, started_at) VALUES (?, ?, ?, 'running', ?, ?, ?)`),
    finishRun: p(
      `UPDATE runs SET status = ?, output = ?, error_code = ?, error_node = ?, error_message = ?, error_hint = ?, turns = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ? WHERE id = ?`,
    ),
    setRunTurns: p(`UPDATE runs SET turns = ? WHERE id = ?`),
    insertNode: p(
      `INSERT INTO node_runs (id, run_id, node_id, agent, turn, status, policy, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    finishNode: p(
      `UPDATE node_runs SET status = ?, output = ?, error_code = ?, error_message = ?, hint = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ? WHERE id = ?`,
    ),
    startAttempt: p(
      `INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, request, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    appendStreamed: p(`UPDATE attempts SET streamed_text = coalesce(streamed_text, '') || ? WHERE id = ?`),
    insertTry: p(
      `INSERT INTO transport_tries (attempt_id, try_no, status, error, retry_after_ms, waited_ms, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    finishAttempt: p(
      `UPDATE attempts SET outcome = ?, finish_reason = ?, cause = ?, action = ?, request = ?, response_text = ?, error_kind = ?, error_message = ?, error_detail = ?, validation_errors = ?, discarded = ?, streamed_text = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ? WHERE id = ?`,
    ),
    setPause: p(
      `INSERT INTO rate_limit_pauses (model, paused_until, reason) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET paused_until = max(paused_until, excluded.paused_until), reason = excluded.reason`,
    ),
    getPause: p(`SELECT paused_until AS until FROM rate_limit_pauses WHERE model = ?`),
  };
  const insertTry = (attemptId: string, t: TryRecord) =>
    s.insertTry.run(attemptId, t.tryNo, t.status, t.error, t.retryAfterMs, t.waitedMs, t.startedAt, t.finishedAt);
  const finishAttempt = c.transaction((attemptId: string, a: AttemptRecord, stored: number) => {
    for (const t of a.tries.slice(stored)) insertTry(attemptId, t);
    s.finishAttempt.run(
      a.outcome,
      a.finishReason,
      a.cause,
      a.action,
      j(a.request),
      a.responseText,
      a.error?.kind ?? null,
      a.error?.message ?? null,
      a.error?.detail ?? null,
      j(a.validationErrors),
      a.discarded ? 1 : 0,
      a.streamedText,
      a.usage.inputTokens,
      a.usage.outputTokens,
      a.usage.costUsd,
      a.finishedAt,
      attemptId,
    );
  });
  const store: RunStore = {
    insertRun: (r) => void s.insertRun.run(r.id, r.project, r.flow, j(r.input), process.pid, r.startedAt),
    finishRun: (r) =>
      void s.finishRun.run(
        r.status,
        j(r.output),
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
    setRunTurns: (id, turns) => void s.setRunTurns.run(turns, id),
    insertNode: (n) =>
      void s.insertNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.status, j(n.policy), n.startedAt, n.status === 'skipped' ? n.startedAt : null),
    finishNode: (n) =>
      void s.finishNode.run(
        n.status,
        j(n.output),
        n.error?.code ?? null,
        n.error?.message ?? null,
        n.error?.hint ?? null,
        n.usage.inputTokens,
        n.usage.outputTokens,
        n.usage.costUsd,
        n.finishedAt,
        n.id,
      ),
    startAttempt: (a) =>
      void s.startAttempt.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, j(a.request), a.startedAt),
    appendStreamed: (id, text) => void s.appendStreamed.run(text, id),
    insertTry: (id, t) => void insertTry(id, t),
    finishAttempt: (id, a, stored) => finishAttempt(id, a, stored),
    setPause: (model, until, reason) => void s.setPause.run(model, until, reason),
    getPause: (model) => (s.getPause.get(model) as { until: number } | undefined)?.until ?? null,
  };
  cache.set(db, store);
  return store;
}
