// The real clock. The engine never reads time, sleeps or draws random numbers any other way, so
// tests inject a virtual one (DESIGN: Transport retry and rate limits).
//
// Every real wait is bounded here: Node's timers hold at most 2^31-1 ms (about 24.8 days) and
// silently fire after 1 ms past that, which would turn a `timeout: "600h"` into an instant timeout
// and a huge `default_wait` into a retry storm. A longer wait is served as a chain of timers; a
// wait that cannot end (NaN, Infinity) is refused with a RangeError instead of firing at once.
import type { Clock } from './types';

/** The longest delay one Node timer holds (2^31-1 ms); longer ones fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Refuses a wait that can never end or is not a number; returns it otherwise. */
export function checkDelay(ms: number, what: string): number {
  if (typeof ms !== 'number' || Number.isNaN(ms) || ms === Infinity) {
    throw new RangeError(`${what}: ${String(ms)} ms is not a wait that can end`);
  }
  return ms;
}

export interface RealTimer {
  /** starts the full delay again from now */
  refresh(): void;
  clear(): void;
}

/**
 * A one-shot real timer of any finite length: delays above MAX_TIMER_MS are served by re-arming
 * (on the monotonic clock), so they never fire early. `refresh()` restarts the full delay.
 */
export function realTimer(ms: number, onFire: () => void, what = 'timer'): RealTimer {
  const delay = Math.max(0, checkDelay(ms, what));
  let due = 0;
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const arm = (wait: number) => {
    timer = setTimeout(tick, Math.min(Math.max(0, wait), MAX_TIMER_MS));
  };
  const tick = () => {
    timer = undefined;
    if (cleared) return;
    const left = due - performance.now();
    if (left > 1) return arm(left);
    cleared = true;
    onFire();
  };
  const start = () => {
    due = performance.now() + delay;
    if (timer && delay <= MAX_TIMER_MS) timer.refresh();
    else {
      if (timer) clearTimeout(timer);
      arm(delay);
    }
  };
  start();
  return {
    refresh() {
      if (!cleared) start();
    },
    clear() {
      cleared = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  try {
    checkDelay(ms, 'sleep');
  } catch (err) {
    return Promise.reject(err);
  }
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timer.clear();
      reject(signal!.reason);
    };
    const timer = realTimer(
      ms,
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      'sleep',
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep,
  random: () => Math.random(),
};
