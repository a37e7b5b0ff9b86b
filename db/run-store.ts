// Writes of a run as it happens (DESIGN: Storage). A finished attempt, a finished run and a
// rate-limit pause are each committed synchronously (with everything queued before them) before
// the engine acts on them; the other facts follow within FLUSH_MS. Prepared statements are made
// once per connection: this is the hot path of every attempt.
import type Database from 'better-sqlite3';
import type { AttemptRecord, NodePolicy, TryRecord, UsageTotals } from '@/lib/engine/types';
import type { Db, RunError } from './types';

type Stmt = Database.Statement<unknown[]>;

export interface RunStore {
  insertRun(r: { id: string; project: string; flow: string; input: unknown; startedAt: number }): void;
  /** resolves once committed */
  finishRun(r: {
    id: string;
    status: 'succeeded' | 'failed';
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
  appendStreamed(attemptId: string, text: string): void;
  /** a transport re-try mid-stream: the attempt's text starts afresh (the broken try keeps its own) */
  resetStreamed(attemptId: string): void;
  insertTry(attemptId: string, t: TryRecord): void;
  /** `request` is rewritten only when `requestChanged` (a written start row already holds it) */
  finishAttempt(attemptId: string, a: AttemptRecord, requestChanged?: boolean): Promise<void>;
  setPause(model: string, pausedUntil: number, reason: string): void;
  getPause(model: string): number | null;
  /** commits every queued fact now (and settles the durable facts waiting for it) */
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
    insertAttempt: p(
      `INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, outcome, finish_reason, native_finish_reason, cause, action, request, response_text, error_kind, error_message, error_detail, validation_errors, discarded, streamed_text, input_tokens, output_tokens, cost_usd, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    appendStreamed: p(`UPDATE attempts SET streamed_text = coalesce(streamed_text, '') || ? WHERE id = ?`),
    resetStreamed: p(`UPDATE attempts SET streamed_text = NULL WHERE id = ?`),
    insertTry: p(
      `INSERT INTO transport_tries (attempt_id, try_no, status, error, retry_after_ms, waited_ms, discarded_text, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    finishAttempt: p(
      `UPDATE attempts SET outcome = ?, finish_reason = ?, native_finish_reason = ?, cause = ?, action = ?, request = coalesce(?, request), response_text = ?, error_kind = ?, error_message = ?, error_detail = ?, validation_errors = ?, discarded = ?, streamed_text = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ? WHERE id = ?`,
    ),
    setPause: p(
      `INSERT INTO rate_limit_pauses (model, paused_until, reason) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET paused_until = max(paused_until, excluded.paused_until), reason = excluded.reason`,
    ),
    getPause: p(`SELECT paused_until AS until FROM rate_limit_pauses WHERE model = ?`),
  };
  const insertTry = (attemptId: string, t: TryRecord) =>
    s.insertTry.run(attemptId, t.tryNo, t.status, t.error, t.retryAfterMs, t.waitedMs, t.discardedText ?? null, t.startedAt, t.finishedAt);

  // Write-behind with durable points: facts that do not decide anything (a run, node or attempt
  // started, a try, streamed text, a node finished) are queued and written within FLUSH_MS.
  // A durable fact — a finished attempt, a finished run — is committed with everything queued
  // before it, and the promise it returns resolves only then; the engine awaits it before it acts
  // on the attempt. Durable facts arriving in the same event-loop turn (concurrent runs) share one
  // commit: every commit costs whole WAL pages, so fewer commits is most of the speed.
  let queue: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  let waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  let immediate: NodeJS.Immediate | null = null;
  const drain = () => {
    const q = queue;
    queue = [];
    for (const f of q) f();
  };
  const flushNow = c.transaction(drain);
  /** commits the queue now; throws only to a caller that waits for a durable fact */
  const commit = () => {
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
    timer = null;
    immediate = null;
    const ws = waiters;
    waiters = [];
    if (!queue.length) return ws.forEach((w) => w.resolve());
    try {
      flushNow();
    } catch (err) {
      if (!ws.length) console.error('aqven: could not write queued run facts:', err);
      return ws.forEach((w) => w.reject(err));
    }
    ws.forEach((w) => w.resolve());
  };
  const later = (f: () => void) => {
    queue.push(f);
    if (!timer && !immediate) {
      timer = setTimeout(commit, FLUSH_MS);
      timer.unref?.();
    }
  };
  const durable =
    <A extends unknown[]>(f: (...args: A) => void) =>
    (...args: A): Promise<void> =>
      new Promise((resolve, reject) => {
        queue.push(() => f(...args));
        waiters.push({ resolve, reject });
        immediate ??= setImmediate(commit);
      });

  // An attempt whose start is still queued when it finishes is written once, whole: one row
  // insert instead of an insert and an update. `open` tracks what of each attempt is written.
  type StartArgs = Parameters<RunStore['startAttempt']>[0];
  const open = new Map<string, { start: StartArgs; written: boolean; tries: number; done: boolean }>();
  const finishAttempt = durable((st: { start: StartArgs; written: boolean; tries: number }, a: AttemptRecord, requestChanged: boolean) => {
    const id = st.start.id;
    const result = [
      a.outcome,
      a.finishReason,
      a.nativeFinishReason ?? null,
      a.cause,
      a.action,
      requestChanged || !st.written ? j(a.request) : null,
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
    ] as const;
    if (st.written) s.finishAttempt.run(...result, a.finishedAt, id);
    else {
      const b = st.start;
      s.insertAttempt.run(b.id, b.nodeRunId, b.runId, b.seq, b.model, b.chainIndex, b.answerNo, ...result, b.startedAt, a.finishedAt);
    }
    for (const t of a.tries.slice(st.written ? st.tries : 0)) insertTry(id, t);
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
    startAttempt: (a) => {
      const st = { start: a, written: false, tries: 0, done: false };
      open.set(a.id, st);
      later(() => {
        if (st.done) return;
        s.startAttempt.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, j(a.request), a.startedAt);
        st.written = true;
      });
    },
    appendStreamed: (id, text) => {
      const st = open.get(id);
      later(() => st && !st.done && s.appendStreamed.run(text, id));
    },
    resetStreamed: (id) => {
      const st = open.get(id);
      later(() => st && !st.done && s.resetStreamed.run(id));
    },
    insertTry: (id, t) => {
      const st = open.get(id);
      later(() => {
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
    // the gate's interface is synchronous, and a pause is rare: commit it on the spot
    setPause: (model, until, reason) => {
      queue.push(() => s.setPause.run(model, until, reason));
      commit();
    },
    getPause: (model) => (s.getPause.get(model) as { until: number } | undefined)?.until ?? null,
    flush: commit,
  };
  cache.set(db, store);
  return store;
}
