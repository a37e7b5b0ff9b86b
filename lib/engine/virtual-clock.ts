// Clocks for tests and demos, so no retry rule needs real time to pass (DESIGN: Transport retry and
// rate limits).

import type { Clock } from './types';

export interface VirtualClock extends Clock {
  /** every wait asked for, in order */
  readonly sleeps: number[];
}

/** A clock whose `sleep` returns at once and moves time forward to when it would have ended. */
export function createVirtualClock(start = Date.UTC(2026, 0, 1), random: () => number = () => 0.5): VirtualClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    random,
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      // sleeps add up: use the manual clock when concurrent waits must overlap (a call queued at the
      // rate gate for a slot or the probe arms a deadline sleep, which here ends at once: it gives up)
      now += Math.max(0, ms);
      return Promise.resolve();
    },
  };
}

export interface ManualClock extends Clock {
  readonly sleeps: number[];
  /** sleeps not yet woken */
  pending(): number;
  /** moves time forward, waking every sleep that ends by then */
  advance(ms: number): void;
}

/** A clock that only moves when the test says so. */
export function createManualClock(start = Date.UTC(2026, 0, 1), random: () => number = () => 0.5): ManualClock {
  let now = start;
  const sleeps: number[] = [];
  let timers: { at: number; wake: () => void }[] = [];
  return {
    sleeps,
    now: () => now,
    random,
    pending: () => timers.length,
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      if (ms <= 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = {
          at: now + ms,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          timers = timers.filter((t) => t !== timer);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        timers.push(timer);
      });
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.wake();
    },
  };
}
