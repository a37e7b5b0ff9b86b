// The wait before a re-try when the server names none (DESIGN: Transport retry and rate limits):
// exponential from `on_rate_limit.default_wait`, doubling each time, ±20% jitter, never above
// `max_wait`.

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
