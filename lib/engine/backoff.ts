// The wait before a re-try when the server names none (DESIGN: Transport retry and rate limits).
// Two settings, two kinds of failure: a 429 (or a rate-limit event) without a wait backs off from
// `on_rate_limit.default_wait`, doubling, ±20% jitter, never above `max_wait`; every other transient
// failure — a 5xx, a dropped connection, a timeout — from `transport.backoff` (base × factor^n, at
// most cap, up to `jitter` of it taken off at random). A wait the server gave is never jittered.
import type { TransportBackoff } from './types';

export interface BackoffOptions {
  defaultWaitMs: number;
  maxWaitMs: number;
  /** fraction of the wait added or taken at random; default 0.2 */
  jitter?: number;
}

/** The wait before re-try number `retryIndex` (0 = the first re-try). `random` is in [0, 1). */
export function backoffMs(retryIndex: number, opts: BackoffOptions, random: () => number): number {
  const jitter = opts.jitter ?? 0.2;
  const base = opts.defaultWaitMs * 2 ** Math.max(0, retryIndex);
  const jittered = base * (1 + (random() * 2 - 1) * jitter);
  return Math.max(0, Math.round(Math.min(jittered, opts.maxWaitMs)));
}

/**
 * The defaults: openai-node's (0.5 s doubling to 8 s, up to 25% off), the field's norm, where a 5xx
 * used to wait on_rate_limit.default_wait (1 s) — a rate limit's wait, for failures that are not one.
 */
export const TRANSPORT_BACKOFF_DEFAULT: TransportBackoff = { baseMs: 500, factor: 2, capMs: 8000, jitter: 0.25 };

/** The longest and shortest wait `transportBackoffMs` can draw before re-try `retryIndex`. */
export function transportBackoffRange(retryIndex: number, b: TransportBackoff): { minMs: number; maxMs: number } {
  const maxMs = Math.min(b.baseMs * b.factor ** Math.max(0, retryIndex), b.capMs);
  return { minMs: Math.round(maxMs * (1 - b.jitter)), maxMs: Math.round(maxMs) };
}

/**
 * The wait before re-try `retryIndex` (0 = the first re-try) of a failure that is not a rate limit.
 * Jitter only shortens the wait, so `cap` stays a true bound and calls that failed together spread out.
 */
export function transportBackoffMs(retryIndex: number, b: TransportBackoff, random: () => number): number {
  const { maxMs } = transportBackoffRange(retryIndex, b);
  return Math.max(0, Math.round(maxMs * (1 - random() * b.jitter)));
}
