// A keyed workload (DESIGN: The provider simulator; used by bench/peers): the answer to a request
// is chosen by (call, answer number) — the call read from the last user message ("call 17") — so
// every client is played the same schedule and a retry never shifts another call's answers.
import type { ScriptStep } from './types';

/** What a workload sees of one request. */
export interface WorkloadRequest {
  model: string;
  /** the text of the last user message */
  userText: string;
}

/** Plays one request's step; undefined falls through to scripts, chaos, then ok. */
export interface SimWorkload {
  answer(req: WorkloadRequest): ScriptStep | undefined;
}

/** One request of a keyed workload, as logged. */
export interface KeyedLogEntry {
  /** ms since the workload's first request (performance.now based) */
  at: number;
  /** epoch ms of the arrival (performance.timeOrigin + now), comparable across processes */
  epochMs: number;
  model: string;
  /** the call index read from the request; -1 when it carries none */
  call: number;
  /** 1 for the call's first request, 2 for its first retry… */
  answer: number;
  step: ScriptStep;
}

export interface KeyedSchedule {
  /** the step of call `call`'s `answer`-th request, `elapsedMs` after the workload's first request */
  step(call: number, answer: number, elapsedMs: number): ScriptStep;
}

export interface KeyedWorkload extends SimWorkload {
  readonly log: readonly KeyedLogEntry[];
  /** epoch ms of the first request; null before it */
  readonly startedAt: number | null;
}

const CALL_RE = /\bcall (\d+)\b/;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}

/** The last user message's text of a request body in any dialect (messages, or gemini contents). */
export function lastUserTextOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const b = body as { messages?: unknown; contents?: unknown };
  const list = Array.isArray(b.messages) ? b.messages : Array.isArray(b.contents) ? b.contents : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i] as { role?: unknown; content?: unknown; parts?: unknown } | null;
    if (m && m.role === 'user') return textOf(m.content ?? m.parts);
  }
  return '';
}

/** The call index a request carries ("call 17" in its last user message); -1 when none. */
export function callIndexOf(userText: string): number {
  const m = CALL_RE.exec(userText);
  return m ? Number(m[1]) : -1;
}

/** A workload answering by (call, answer number) from `schedule`, logging every request with its arrival time. */
export function keyedWorkload(schedule: KeyedSchedule, now: () => number = () => performance.now()): KeyedWorkload {
  const log: KeyedLogEntry[] = [];
  const answers = new Map<string, number>();
  let t0: number | null = null;
  return {
    log,
    get startedAt() {
      return t0 === null ? null : performance.timeOrigin + t0;
    },
    answer(req) {
      const t = now();
      t0 ??= t;
      const call = callIndexOf(req.userText);
      const key = `${req.model}\u0000${call}`;
      const answer = (answers.get(key) ?? 0) + 1;
      answers.set(key, answer);
      const step = schedule.step(call, answer, t - t0);
      log.push({ at: t - t0, epochMs: performance.timeOrigin + t, model: req.model, call, answer, step });
      return step;
    },
  };
}
