// Writes of a run as it happens (DESIGN.md §10). A finished attempt, a finished run and a
// rate-limit pause are each committed synchronously (with everything queued before them) before
// the engine acts on them; the other facts follow within FLUSH_MS. Prepared statements are made
// once per connection: this is the hot path of every attempt.
import type Database from 'better-sqlite3';
import type { AttemptRecord, NodePolicy, TryRecord, UsageTotals } from '@/lib/engine/types';
import type { RunError } from '@/lib/flow/run-record';
import type { Db } from './client';

type Stmt = Database.Statement<unknown[]>;

export interface RunStore {
  insertRun(r: { id: string; project: string; flow: string; input: unknown; startedAt: number }): void;
  finishRun(r: {
    id: string;
    status: 'succeeded' | 'failed';
    output: unknown;
    error: RunError | null;
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
  /** a transport re-try mid-stream: the attempt's text starts afresh (the broken try keeps its own) */
  resetStreamed(attemptId: string): void;
  insertTry(attemptId: string, t: TryRecord): void;
  /** `request` is rewritten only when `requestChanged` (the start row already holds it) */
  finishAttempt(attemptId: string, a: AttemptRecord, triesAlreadyStored: number, requestChanged?: boolean): void;
  setPause(model: string, pausedUntil: number, reason: string): void;
  getPause(model: string): number | null;
  /** writes every queued fact now */
  flush(): void;
}

/** longest a queued fact waits before it is written (streamed text batches, in-flight rows) */
export const FLUSH_MS = 100;

const j = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

const cache = new WeakMap<Db, RunStore>();

/** Writes what the store of `db` has queued, if it has a store. */
export function flushRunStore(db: Db): void {
  cache.get(db)?.flush();
}

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
    resetStreamed: p(`UPDATE attempts SET streamed_text = NULL WHERE id = ?`),
    insertTry: p(
      `INSERT INTO transport_tries (attempt_id, try_no, status, error, retry_after_ms, waited_ms, discarded_text, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    finishAttempt: p(
      `UPDATE attempts SET outcome = ?, finish_reason = ?, cause = ?, action = ?, request = coalesce(?, request), response_text = ?, error_kind = ?, error_message = ?, error_detail = ?, validation_errors = ?, discarded = ?, streamed_text = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ? WHERE id = ?`,
    ),
    setPause: p(
      `INSERT INTO rate_limit_pauses (model, paused_until, reason) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET paused_until = max(paused_until, excluded.paused_until), reason = excluded.reason`,
    ),
    getPause: p(`SELECT paused_until AS until FROM rate_limit_pauses WHERE model = ?`),
  };
  const insertTry = (attemptId: string, t: TryRecord) =>
    s.insertTry.run(attemptId, t.tryNo, t.status, t.error, t.retryAfterMs, t.waitedMs, t.discardedText ?? null, t.startedAt, t.finishedAt);

  // Write-behind with durable points: facts that do not decide anything (a run, node or attempt
  // started, a try, streamed text, a node finished) are queued and written within FLUSH_MS, or
  // earlier in the same transaction as the next durable fact — a finished attempt, a finished run,
  // a rate-limit pause. Every commit costs whole WAL pages, so fewer commits is most of the speed.
  let queue: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  const drain = () => {
    const q = queue;
    queue = [];
    for (const f of q) f();
  };
  const flushNow = c.transaction(drain);
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!queue.length) return;
    try {
      flushNow();
    } catch (err) {
      // a timer flush has no caller to throw to; the next durable write will throw on its own
      console.error('aqven: could not write queued run facts:', err);
    }
  };
  const later = (f: () => void) => {
    queue.push(f);
    if (!timer) {
      timer = setTimeout(flush, FLUSH_MS);
      timer.unref?.();
    }
  };
  const durable = <A extends unknown[]>(f: (...args: A) => void) => {
    const tx = c.transaction((...args: A) => {
      drain();
      f(...args);
    });
    return (...args: A) => {
      if (timer) clearTimeout(timer);
      timer = null;
      tx(...args);
    };
  };

  const finishAttempt = durable((attemptId: string, a: AttemptRecord, stored: number, requestChanged: boolean) => {
    for (const t of a.tries.slice(stored)) insertTry(attemptId, t);
    s.finishAttempt.run(
      a.outcome,
      a.finishReason,
      a.cause,
      a.action,
      requestChanged ? j(a.request) : null,
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
    insertRun: (r) => later(() => s.insertRun.run(r.id, r.project, r.flow, j(r.input), process.pid, r.startedAt)),
    finishRun: durable((r) =>
      s.finishRun.run(
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
    ),
    setRunTurns: (id, turns) => later(() => s.setRunTurns.run(turns, id)),
    insertNode: (n) =>
      later(() =>
        s.insertNode.run(n.id, n.runId, n.nodeId, n.agent, n.turn, n.status, j(n.policy), n.startedAt, n.status === 'skipped' ? n.startedAt : null),
      ),
    finishNode: (n) =>
      later(() =>
        s.finishNode.run(
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
      ),
    startAttempt: (a) =>
      later(() => s.startAttempt.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, j(a.request), a.startedAt)),
    appendStreamed: (id, text) => later(() => s.appendStreamed.run(text, id)),
    resetStreamed: (id) => later(() => s.resetStreamed.run(id)),
    insertTry: (id, t) => later(() => insertTry(id, t)),
    finishAttempt: (id, a, stored, requestChanged = true) => finishAttempt(id, a, stored, requestChanged),
    setPause: durable((model: string, until: number, reason: string) => s.setPause.run(model, until, reason)),
    getPause: (model) => (s.getPause.get(model) as { until: number } | undefined)?.until ?? null,
    flush,
  };
  cache.set(db, store);
  return store;
}
