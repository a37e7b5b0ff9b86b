// What each workload reports, computed from the fake's request log (what was sent and answered)
// and the contender's per-call results (what its caller got). Pure functions, tested.
import { parseRetryAfter } from '@/lib/engine/retry-after';
import type { KeyedLogEntry } from '@/lib/sim/workload';
import type { CallResult } from './contender';
import { BAD_KINDS, billedTokens, GOOD, type AnswerKind } from './workloads';

type KindOf = (e: KeyedLogEntry) => AnswerKind;

/** The kind of the last answer each call was given (the one a returned object came from). */
export function lastAnswers(log: readonly KeyedLogEntry[], kindOf: KindOf): Map<number, AnswerKind> {
  const last = new Map<number, { answer: number; kind: AnswerKind }>();
  for (const e of log) {
    const seen = last.get(e.call);
    if (!seen || e.answer > seen.answer) last.set(e.call, { answer: e.answer, kind: kindOf(e) });
  }
  return new Map([...last].map(([call, v]) => [call, v.kind]));
}

/**
 * Bad answers accepted: calls that handed an object to the caller although the answer it came from
 * was length, content_filter, refusal or finish_reason error. Also counted: returned objects that
 * carry the bad answers' payload, whatever the log says (the two must agree).
 */
export function badAccepted(
  log: readonly KeyedLogEntry[],
  results: readonly CallResult[],
  kindOf: KindOf,
): { count: number; byKind: Partial<Record<AnswerKind, number>>; payloadCount: number } {
  const last = lastAnswers(log, kindOf);
  const byKind: Partial<Record<AnswerKind, number>> = {};
  let count = 0;
  let payloadCount = 0;
  for (const r of results) {
    if (!r.returned) continue;
    if (r.queue !== GOOD.queue) payloadCount++;
    const kind = last.get(r.call);
    if (kind && BAD_KINDS.has(kind)) {
      count++;
      byKind[kind] = (byKind[kind] ?? 0) + 1;
    }
  }
  return { count, byKind, payloadCount };
}

export interface PauseRule {
  windowMs: number;
  retryAfterMs: number;
  /** the first burst: first requests of calls arriving this soon after the first request… */
  burstGraceMs: number;
  /** …at most this many (the contender's concurrency cap; Infinity for the peers) */
  burstCap: number;
  /** timer slack allowed between two requests of the pause chain */
  toleranceMs: number;
}

/**
 * Requests beyond "one per pause" (W1's rule): after the first burst, a request that arrives during
 * the window while a pause is running — less than retry-after since the previous request that was
 * answered 429 (the burst's first request starts the chain). Per model. Requests after the window
 * (answered ok) are the release and are not counted.
 */
export function pauseViolations(log: readonly KeyedLogEntry[], rule: PauseRule): number {
  const byModel = new Map<string, KeyedLogEntry[]>();
  for (const e of log) byModel.set(e.model, [...(byModel.get(e.model) ?? []), e]);
  let violations = 0;
  for (const entries of byModel.values()) {
    const sorted = [...entries].sort((a, b) => a.at - b.at);
    if (sorted.length === 0) continue;
    const first = sorted[0]!.at;
    let inBurst = 0;
    let chainAt = first;
    for (const e of sorted) {
      if (e.at >= rule.windowMs) break;
      if (e.answer === 1 && e.at - first < rule.burstGraceMs && inBurst < rule.burstCap) {
        inBurst++;
        continue;
      }
      if (e.at - chainAt < rule.retryAfterMs - rule.toleranceMs) violations++;
      else chainAt = e.at;
    }
  }
  return violations;
}

export interface W1Figures {
  requests: number;
  rateLimited: number;
  duringWindow: number;
  /** the first request answered ok (after the window), ms after the fake's first request */
  firstOkMs: number;
  /** the last request's arrival, ms after the fake's first request */
  lastRequestMs: number;
  /**
   * The release, from the fake's side: ms from the first request answered ok (the probe after the
   * last pause) to the next request's arrival — how soon the waiting calls went — and to the last
   * request's arrival (NaN when nothing came after it).
   */
  releaseFirstMs: number;
  releaseLastMs: number;
  /** the last call's end, ms after the fake's first request */
  lastDoneMs: number;
  optimumMs: number;
  ratioToOptimum: number;
  failures: number;
  pauseViolations: number;
}

export function w1Figures(log: readonly KeyedLogEntry[], results: readonly CallResult[], kindOf: KindOf, o: { startedAt: number; rttMs: number; rule: PauseRule }): W1Figures {
  const lastDone = Math.max(...results.map((r) => r.doneAt));
  const optimumMs = o.rule.windowMs + o.rttMs;
  const lastDoneMs = lastDone - o.startedAt;
  const firstOkMs = Math.min(...log.filter((e) => kindOf(e) === 'ok').map((e) => e.at));
  const after = log.filter((e) => e.at > firstOkMs).map((e) => e.at);
  return {
    requests: log.length,
    rateLimited: log.filter((e) => kindOf(e) === 'rate_limit').length,
    duringWindow: log.filter((e) => e.at < o.rule.windowMs).length,
    firstOkMs,
    lastRequestMs: Math.max(...log.map((e) => e.at)),
    releaseFirstMs: after.length ? Math.min(...after) - firstOkMs : NaN,
    releaseLastMs: after.length ? Math.max(...after) - firstOkMs : NaN,
    lastDoneMs,
    optimumMs,
    ratioToOptimum: lastDoneMs / optimumMs,
    failures: results.filter((r) => !r.returned).length,
    pauseViolations: pauseViolations(log, o.rule),
  };
}

export interface W2Figures {
  badAccepted: number;
  byKind: Partial<Record<AnswerKind, number>>;
  /** the bad first answers the fake served (the most a contender could accept) */
  badServed: number;
  successes: number;
  failures: number;
  requests: number;
}

export function w2Figures(log: readonly KeyedLogEntry[], results: readonly CallResult[], kindOf: KindOf): W2Figures {
  const bad = badAccepted(log, results, kindOf);
  return {
    badAccepted: Math.max(bad.count, bad.payloadCount),
    byKind: bad.byKind,
    badServed: log.filter((e) => BAD_KINDS.has(kindOf(e))).length,
    successes: results.filter((r) => r.returned && r.queue === GOOD.queue).length,
    failures: results.filter((r) => !r.returned).length,
    requests: log.length,
  };
}

export interface W3Figures {
  successes: number;
  wallMs: number;
  requests: number;
  requestsPerSuccess: number;
  billedTokens: number;
  visibleTokens: number;
  /** visible / billed */
  visibleShare: number;
  /** answers cut off mid-body (billed, their usage never received by any client) */
  droppedAnswers: number;
  /** AQVEN: attempts its run record marks usage unknown */
  usageUnknownAttempts: number;
  /** AQVEN: ms waited before tries, summed over every call, by what came before (contender.ts) */
  waitsMs: Record<string, number>;
  /**
   * ms of the wall time a model-wide pause after every 429 takes: the union of the 429s'
   * retry-after windows, each from its arrival at the fake, within the workload's wall time. What
   * the seed page's pause costs a contender that keeps it (AQVEN); the peers keep no such pause.
   */
  pausedMs: number;
}

/** The retry-after a logged answer asked for, ms (the engine's parser); 0 when it asked none. */
function retryAfterMs(e: KeyedLogEntry): number {
  return parseRetryAfter((e.step as { headers?: Record<string, string> }).headers?.['retry-after'], e.epochMs) ?? 0;
}

/** The union of the 429s' retry-after windows [arrival, arrival + retry-after), clipped to [0, wallMs]. */
export function pausedByRateLimits(log: readonly KeyedLogEntry[], kindOf: KindOf, wallMs: number): number {
  const spans = log
    .filter((e) => kindOf(e) === 'rate_limit')
    .map((e) => [e.at, Math.min(wallMs, e.at + retryAfterMs(e))] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [from, to] of spans) {
    const start = Math.max(from, end);
    if (to > start) total += to - start;
    end = Math.max(end, to);
  }
  return total;
}

export function w3Figures(log: readonly KeyedLogEntry[], results: readonly CallResult[], kindOf: KindOf, wallMs: number): W3Figures {
  const successes = results.filter((r) => r.returned && r.queue === GOOD.queue).length;
  const billed = log.reduce((s, e) => s + billedTokens(kindOf(e)), 0);
  const visible = results.reduce((s, r) => s + r.visibleTokens, 0);
  return {
    successes,
    wallMs,
    requests: log.length,
    requestsPerSuccess: successes ? log.length / successes : Infinity,
    billedTokens: billed,
    visibleTokens: visible,
    visibleShare: billed ? visible / billed : 1,
    droppedAnswers: log.filter((e) => kindOf(e) === 'drop').length,
    usageUnknownAttempts: results.reduce((s, r) => s + (r.usageUnknownAttempts ?? 0), 0),
    waitsMs: results.reduce<Record<string, number>>((acc, r) => {
      for (const [k, v] of Object.entries(r.waits ?? {})) acc[k] = (acc[k] ?? 0) + v;
      return acc;
    }, {}),
    pausedMs: pausedByRateLimits(log, kindOf, wallMs),
  };
}

/** Median and range of a list of figures. */
export function spread(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
}
