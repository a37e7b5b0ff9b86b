// How the rate gate waits (DESIGN: Transport retry and rate limits): every wait at the gate ends
// at the call's transport budget (`deadline`) or with the caller's signal, whichever is first.
import { abortReason, linkAbort } from './abort-link';
import { MAX_TIMER_MS } from './clock';
import type { Clock } from './types';

/** the wait outlasted the transport budget */
const DEADLINE = Symbol('transport budget spent');
/** a wait's deadline timer no longer needed: a reason of our own (an abort without one builds a DOMException and its stack) */
const WAIT_OVER = Symbol('the wait is over');

/** Resolves when `p` does, or rejects with the signal's reason when it aborts first. */
export function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * A signal for one wait: aborts with the caller's signal, or with DEADLINE when the deadline
 * passes. Started only when the call must wait, so a free gate arms no timer.
 */
export function deadlineSignal(clock: Clock, deadline: number, outer: AbortSignal | undefined) {
  const { ac, unlink } = linkAbort(outer);
  const timer = new AbortController();
  const left = deadline - clock.now();
  if (left <= 0) ac.abort(DEADLINE);
  // a deadline further off than a timer can hold is no bound in practice
  else if (left <= MAX_TIMER_MS)
    clock.sleep(left, timer.signal).then(
      () => ac.abort(DEADLINE),
      () => {},
    );
  return {
    signal: ac.signal,
    passed: () => ac.signal.reason === DEADLINE,
    dispose: () => {
      timer.abort(WAIT_OVER);
      unlink();
    },
  };
}

export interface WaitBound {
  clock: Clock;
  deadline: number;
  signal?: AbortSignal;
}

/**
 * Waits for `p` within the bound: true when it settled, false when the deadline passed first
 * (`onGiveUp` runs then, and on abort); rethrows the caller's abort.
 */
export async function waitWithin(p: Promise<unknown>, bound: WaitBound, onGiveUp?: () => void): Promise<boolean> {
  const wait = deadlineSignal(bound.clock, bound.deadline, bound.signal);
  try {
    await untilAborted(p, wait.signal);
    return true;
  } catch (err) {
    onGiveUp?.();
    if (wait.passed()) return false;
    throw err;
  } finally {
    wait.dispose();
  }
}
