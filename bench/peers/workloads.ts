// The four workloads of the peer benchmark as keyed schedules for the simulator
// (lib/sim/workload.ts): the answer to call N's k-th request is fixed by (N, k), the same for every
// contender. Every answer with a body bills the same usage, so tokens compare across contenders.
import { mulberry32 } from '@/lib/sim/chaos';
import type { ScriptStep } from '@/lib/sim/types';
import type { KeyedLogEntry, KeyedSchedule } from '@/lib/sim/workload';

export const MODEL = 'openai/gpt-oss-20b';
/** the answer of a good reply; bad replies (W2) carry BAD, so a returned object shows where it came from */
export const GOOD = { queue: 'billing' } as const;
export const BAD = { queue: 'sales' } as const;
export const USAGE = { input: 40, output: 8 } as const;
const BILLED = USAGE.input + USAGE.output;

export type AnswerKind =
  | 'ok'
  | 'length' // finish_reason length, JSON that parses and validates
  | 'content_filter' // finish_reason content_filter, valid JSON
  | 'refusal' // message.refusal alongside parseable content
  | 'finish_error' // HTTP 200, finish_reason "error", valid JSON
  | 'rate_limit' // 429 with retry-after
  | 'server_error' // 500
  | 'drop' // headers and half the body, then the socket is destroyed
  | 'invalid_json' // content that is no JSON
  | 'truncated'; // finish_reason length, JSON cut mid-way

/** W2's bad answers: valid-looking JSON that no caller should take as good output. */
export const BAD_KINDS: ReadonlySet<AnswerKind> = new Set(['length', 'content_filter', 'refusal', 'finish_error']);

const usage = { ...USAGE };
const REFUSAL_TEXT = "I can't help with sorting this ticket.";

function refusalBody(): ScriptStep {
  // OpenRouter's shape with both fields set: no script step renders that, so the body is written out
  return {
    kind: 'status',
    status: 200,
    body: {
      id: 'gen-peers-refusal',
      provider: 'OpenAI',
      model: MODEL,
      object: 'chat.completion',
      created: 1764547200,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: JSON.stringify(BAD), refusal: REFUSAL_TEXT, reasoning: null },
          logprobs: null,
          finish_reason: 'stop',
          native_finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: BILLED },
    },
  };
}

/** The step of each kind; `retryAfter` is the 429's header (seconds). */
export function stepsFor(retryAfter: string): Record<AnswerKind, ScriptStep> {
  return {
    ok: { kind: 'ok', json: GOOD, usage },
    length: { kind: 'ok', json: BAD, usage, finish_reason: 'length', native_finish_reason: 'MAX_TOKENS' },
    content_filter: { kind: 'ok', json: BAD, usage, finish_reason: 'content_filter', native_finish_reason: 'content_filter' },
    refusal: refusalBody(),
    finish_error: { kind: 'provider_error', variant: 'choice_error', text: JSON.stringify(BAD), usage },
    rate_limit: { kind: 'status', status: 429, headers: { 'retry-after': retryAfter } },
    server_error: { kind: 'status', status: 500 },
    drop: { kind: 'drop', when: 'during_body', text: JSON.stringify(GOOD), usage },
    invalid_json: { kind: 'ok', text: 'Sure! The ticket goes to billing, I am fairly confident.', usage },
    truncated: { kind: 'truncated', text: '{"queue": "bill', usage },
  };
}

/** Tokens the fake bills for an answer: every answer generated (a body, even one cut off) bills USAGE; 429 and 500 bill nothing. */
export function billedTokens(kind: AnswerKind): number {
  return kind === 'rate_limit' || kind === 'server_error' ? 0 : BILLED;
}

export interface Workload {
  name: 'w1' | 'w2' | 'w3' | 'w4';
  /** the call indices the contender makes (1..n) */
  calls: number;
  /** contender-side concurrency; W1 starts every call at once */
  concurrency: number;
  schedule: KeyedSchedule;
  /** the kind of a logged answer */
  kindOf(entry: KeyedLogEntry): AnswerKind;
}

/** A seeded shuffle of 1..n: the first counts[0] get kinds[0], the next counts[1] kinds[1]… */
export function exactMix(n: number, seed: number, mix: [AnswerKind, number][]): Map<number, AnswerKind> {
  const rand = mulberry32(seed);
  const order = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const out = new Map<number, AnswerKind>();
  let at = 0;
  for (const [kind, rate] of mix) {
    for (const call of order.slice(at, at + Math.round(rate * n))) out.set(call, kind);
    at += Math.round(rate * n);
  }
  return out;
}

/** One seeded draw for (call, answer): the same for every contender, whatever order calls arrive in. */
export function drawFor(seed: number, call: number, answer: number, mix: [AnswerKind, number][]): AnswerKind {
  const r = mulberry32((seed ^ Math.imul(call, 0x9e3779b1) ^ Math.imul(answer, 0x85ebca6b)) >>> 0)();
  let acc = 0;
  for (const [kind, rate] of mix) {
    acc += rate;
    if (r < acc) return kind;
  }
  return 'ok';
}

function workload(name: Workload['name'], calls: number, concurrency: number, retryAfter: string, kindAt: (call: number, answer: number, ms: number) => AnswerKind): Workload {
  const steps = stepsFor(retryAfter);
  const kinds = new Map<ScriptStep, AnswerKind>(Object.entries(steps).map(([k, s]) => [s, k as AnswerKind]));
  return {
    name,
    calls,
    concurrency,
    schedule: { step: (call, answer, ms) => steps[kindAt(call, answer, ms)] },
    kindOf: (e) => kinds.get(e.step) ?? 'ok',
  };
}

export const W1_WINDOW_MS = 2000;
export const W1_RETRY_AFTER_S = 1;

/** W1: every request in the 2 s from the first gets 429 retry-after 1, then valid JSON. */
export function w1(calls = 50): Workload {
  return workload('w1', calls, calls, String(W1_RETRY_AFTER_S), (_c, _a, ms) => (ms < W1_WINDOW_MS ? 'rate_limit' : 'ok'));
}

export const W2_MIX: [AnswerKind, number][] = [
  ['length', 0.05],
  ['content_filter', 0.03],
  ['refusal', 0.03],
  ['finish_error', 0.02],
];

/** W2: a fixed seeded mix of bad first answers (13% of the calls); every later answer is good. */
export function w2(calls = 200, seed = 2): Workload {
  const first = exactMix(calls, seed, W2_MIX);
  return workload('w2', calls, 16, '1', (call, answer) => (answer === 1 ? (first.get(call) ?? 'ok') : 'ok'));
}

export const W3_MIX: [AnswerKind, number][] = [
  ['rate_limit', 0.05],
  ['server_error', 0.03],
  ['drop', 0.02],
  ['invalid_json', 0.05],
  ['truncated', 0.02],
];

/** W3: first answers in exact proportions, every later answer drawn with the same rates, keyed by (call, answer). */
export function w3(calls = 500, seed = 3): Workload {
  const first = exactMix(calls, seed, W3_MIX);
  return workload('w3', calls, 16, '0.2', (call, answer) => (answer === 1 ? (first.get(call) ?? 'ok') : drawFor(seed, call, answer, W3_MIX)));
}

/** W4: no faults, zero latency. */
export function w4(calls = 2000): Workload {
  return workload('w4', calls, 4, '1', () => 'ok');
}
