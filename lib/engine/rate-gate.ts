// The rate-limit gate (DESIGN: Transport retry and rate limits; seed: "A rate limit (429) also
// pauses every other call of the same model until the wait is over"). Per model string: a pause
// until a time, one probe after a pause (the others follow only when it did not get another 429),
// and `max_concurrency` slots. Every wait here is bounded: a pause by on_rate_limit.max_wait (a
// 429 never pauses longer, `pauseFor429`), and every wait of a call — a pause, the probe, a slot —
// by the call's own transport budget (`deadline`). This is the engine's only process-wide state:
// `defaultRateGate`; tests make their own.
import { MAX_TIMER_MS } from './clock';
import type { Clock, PauseOrigin, SharedPauses } from './types';

export interface AcquireOptions {
  clock: Clock;
  /** the provider's max_concurrency */
  maxConcurrency: number;
  /** a pause longer than this is not waited out (on_rate_limit.max_wait) */
  maxWaitMs: number;
  /** no wait at the gate goes past this time (the end of the attempt's transport budget) */
  deadline: number;
  signal?: AbortSignal;
  shared?: SharedPauses;
}

export interface GateLease {
  /** clock time spent at the gate: pauses, waiting for the probe, waiting for a slot */
  waitedMs: number;
  /** this call goes first after a pause */
  probe: boolean;
  /** frees the slot; a probe that did not get a 429 lets the others through */
  release(outcome: { rateLimited: boolean }): void;
}

/** What a refused call was waiting for: a pause, the probe after one, or a free slot (max_concurrency). */
export type GateWait = 'pause' | 'probe' | 'slot';

export type Acquired =
  | { ok: true; lease: GateLease }
  | {
      ok: false;
      /** which limit the wait exceeds: the pause is longer than max_wait, or the wait outlasts the budget */
      limit: 'max_wait' | 'budget';
      waitingFor: GateWait;
      /** the end of the pause (waitingFor: pause), else null */
      pausedUntil: number | null;
      waitedMs: number;
    };

export interface GatePause {
  model: string;
  pausedUntil: number;
  reason: string;
  /** the 429 behind the pause; null for a pause read from another process */
  origin: PauseOrigin | null;
  inFlight: number;
  waiting: number;
}

export interface RateGate {
  acquire(model: string, opts: AcquireOptions): Promise<Acquired>;
  /** pauses the model until `pausedUntil` (a later pause wins); returns whether this extended it */
  pause(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin): boolean;
  /**
   * Forgets the model's pause (an editor cleared it on /providers): the calls waiting it out go on
   * at once, one of them first as the probe. Returns whether there was a pause to forget.
   */
  clear(model: string): boolean;
  pausedUntil(model: string): number | null;
  /** current pauses and load, for the providers page */
  snapshot(now: number): GatePause[];
}

/**
 * The pause a transient 429 sets: until the wait asked for is over, but never longer than
 * on_rate_limit.max_wait. A retry-after in the far future (`retry-after: <year 9999>`) ends the
 * attempt at once (the transport's rule) and must not block the model for every later call and
 * process: the other calls still wait, within that bound.
 */
export function pauseFor429(a: { now: number; askedMs: number; maxWaitMs: number; serverWait: string | null }): { pausedUntil: number; origin: PauseOrigin } {
  const ms = Math.max(0, Math.min(a.askedMs, a.maxWaitMs));
  return { pausedUntil: a.now + ms, origin: { setAt: a.now, serverWait: a.serverWait, askedMs: a.askedMs, maxWaitMs: a.maxWaitMs } };
}

interface ModelState {
  pausedUntil: number;
  reason: string;
  origin: PauseOrigin | null;
  /** set by a pause; cleared when a probe comes back without a 429 */
  probeNeeded: boolean;
  probeInFlight: boolean;
  probeDone: Promise<void> | null;
  resolveProbe: (() => void) | null;
  active: number;
  slotQueue: (() => void)[];
  waiting: number;
  /** the sleeps of calls waiting out the pause, woken early when it is cleared */
  sleepers: Set<AbortController>;
}

/** abort reasons of the gate's own waits */
const CLEARED = Symbol('pause cleared');
const DEADLINE = Symbol('transport budget spent');

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** Resolves when `p` does, or rejects when the signal aborts. */
function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
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

/** A controller of one wait: its signal aborts too when the caller's does. */
function linked(outer: AbortSignal | undefined) {
  const ac = new AbortController();
  const onOuter = () => ac.abort(abortError(outer!));
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return { ac, unlink: () => outer?.removeEventListener('abort', onOuter) };
}

/**
 * A signal for one wait for the probe or a slot: aborts with the caller's signal, or with
 * DEADLINE when the deadline passes. Started only when the call must wait, so a free gate arms
 * no timer.
 */
function deadlineSignal(clock: Clock, deadline: number, outer: AbortSignal | undefined) {
  const { ac, unlink } = linked(outer);
  const timer = new AbortController();
  const left = deadline - clock.now();
  if (left <= 0) ac.abort(DEADLINE);
  // a deadline further off than a timer can hold is no bound in practice
  else if (left <= MAX_TIMER_MS) clock.sleep(left, timer.signal).then(() => ac.abort(DEADLINE), () => {});
  return {
    signal: ac.signal,
    passed: () => ac.signal.reason === DEADLINE,
    dispose: () => {
      timer.abort();
      unlink();
    },
  };
}

export function createRateGate(): RateGate {
  const models = new Map<string, ModelState>();

  const stateOf = (model: string): ModelState => {
    let s = models.get(model);
    if (!s) {
      s = {
        pausedUntil: 0,
        reason: '',
        origin: null,
        probeNeeded: false,
        probeInFlight: false,
        probeDone: null,
        resolveProbe: null,
        active: 0,
        slotQueue: [],
        waiting: 0,
        sleepers: new Set(),
      };
      models.set(model, s);
    }
    return s;
  };

  const pause = (model: string, until: number, reason: string, origin?: PauseOrigin): boolean => {
    const s = stateOf(model);
    s.probeNeeded = true;
    if (until <= s.pausedUntil) return false;
    s.pausedUntil = until;
    s.reason = reason;
    s.origin = origin ?? null;
    return true;
  };

  const clear = (model: string): boolean => {
    const s = models.get(model);
    if (!s || s.pausedUntil === 0) return false;
    s.pausedUntil = 0;
    s.reason = '';
    s.origin = null;
    // probeNeeded stays: as when a pause runs out, one call goes first
    for (const sleeper of s.sleepers) sleeper.abort(CLEARED);
    return true;
  };

  /** A pause another process wrote is a pause here too. */
  const syncShared = (model: string, s: ModelState, shared?: SharedPauses) => {
    const until = shared?.get(model) ?? null;
    if (until !== null && until > s.pausedUntil) pause(model, until, 'rate limited in another process');
  };

  /** Sleeps out (part of) a pause; returns early when the pause is cleared, rejects on abort. */
  const sleepOutPause = async (s: ModelState, ms: number, clock: Clock, signal?: AbortSignal) => {
    const { ac, unlink } = linked(signal);
    s.sleepers.add(ac);
    try {
      await clock.sleep(Math.min(ms, MAX_TIMER_MS), ac.signal);
    } catch (err) {
      if (ac.signal.reason !== CLEARED) throw err;
    } finally {
      s.sleepers.delete(ac);
      unlink();
    }
  };

  const releaseSlot = (s: ModelState) => {
    const next = s.slotQueue.shift();
    if (next) next(); // hand the slot over: `active` stays the same
    else s.active--;
  };

  /** Takes a slot, queueing for one when all are in flight; false when the deadline passes first. */
  const takeSlot = async (s: ModelState, opts: AcquireOptions): Promise<boolean> => {
    if (s.active < Math.max(1, opts.maxConcurrency)) {
      s.active++;
      return true;
    }
    let resolveSlot!: () => void;
    const granted = new Promise<void>((r) => (resolveSlot = r));
    s.slotQueue.push(resolveSlot);
    const wait = deadlineSignal(opts.clock, opts.deadline, opts.signal);
    try {
      await untilAborted(granted, wait.signal);
      return true;
    } catch (err) {
      const i = s.slotQueue.indexOf(resolveSlot);
      if (i >= 0) s.slotQueue.splice(i, 1);
      else releaseSlot(s); // granted just as we gave up: pass it on
      if (wait.passed()) return false;
      throw err;
    } finally {
      wait.dispose();
    }
  };

  /** Waits for the probe in flight; false when the deadline passes first. */
  const awaitProbe = async (s: ModelState, opts: AcquireOptions): Promise<boolean> => {
    const wait = deadlineSignal(opts.clock, opts.deadline, opts.signal);
    try {
      await untilAborted(s.probeDone!, wait.signal);
      return true;
    } catch (err) {
      if (wait.passed()) return false;
      throw err;
    } finally {
      wait.dispose();
    }
  };

  const acquire = async (model: string, opts: AcquireOptions): Promise<Acquired> => {
    const { clock, signal } = opts;
    const s = stateOf(model);
    const start = clock.now();
    const refuse = (limit: 'max_wait' | 'budget', waitingFor: GateWait): Acquired => ({
      ok: false,
      limit,
      waitingFor,
      pausedUntil: waitingFor === 'pause' ? s.pausedUntil : null,
      waitedMs: clock.now() - start,
    });
    s.waiting++;
    try {
      for (;;) {
        if (signal?.aborted) throw abortError(signal);
        syncShared(model, s, opts.shared);
        const now = clock.now();
        if (s.pausedUntil > now) {
          // don't sleep into certain failure (DESIGN: Transport retry and rate limits)
          const left = s.pausedUntil - now;
          if (left > opts.maxWaitMs) return refuse('max_wait', 'pause');
          if (s.pausedUntil > opts.deadline) return refuse('budget', 'pause');
          await sleepOutPause(s, left, clock, signal);
          continue;
        }
        if (s.probeNeeded && s.probeInFlight) {
          if (!(await awaitProbe(s, opts))) return refuse('budget', 'probe');
          continue;
        }
        if (!(await takeSlot(s, opts))) return refuse('budget', 'slot');
        // the world may have changed while we queued for the slot
        if (s.pausedUntil > clock.now() || (s.probeNeeded && s.probeInFlight)) {
          releaseSlot(s);
          continue;
        }
        const probe = s.probeNeeded;
        if (probe) {
          s.probeInFlight = true;
          s.probeDone = new Promise<void>((r) => (s.resolveProbe = r));
        }
        let released = false;
        const lease: GateLease = {
          waitedMs: clock.now() - start,
          probe,
          release: ({ rateLimited }) => {
            if (released) return;
            released = true;
            releaseSlot(s);
            if (!probe) return;
            s.probeInFlight = false;
            // a 429 has already set a new pause (and left probeNeeded on): the next waiter probes again
            if (!rateLimited) s.probeNeeded = false;
            const done = s.resolveProbe;
            s.resolveProbe = null;
            s.probeDone = null;
            done?.();
          },
        };
        return { ok: true, lease };
      }
    } finally {
      s.waiting--;
    }
  };

  return {
    acquire,
    pause,
    clear,
    pausedUntil: (model) => {
      const s = models.get(model);
      return s && s.pausedUntil > 0 ? s.pausedUntil : null;
    },
    snapshot: (now) =>
      [...models.entries()]
        .filter(([, s]) => s.pausedUntil > now || s.active > 0 || s.waiting > 0)
        .map(([model, s]) => ({ model, pausedUntil: s.pausedUntil, reason: s.reason, origin: s.origin, inFlight: s.active, waiting: s.waiting })),
  };
}

/**
 * The process-wide gate: every call of a model string in this process shares it. It lives on
 * globalThis because a bundler may load this module more than once in one process (Next's route
 * bundles, hot reload), and a pause cleared on /providers must be cleared for every run.
 */
const GLOBAL_KEY = Symbol.for('aqven.defaultRateGate');
export const defaultRateGate: RateGate = ((globalThis as { [GLOBAL_KEY]?: RateGate })[GLOBAL_KEY] ??= createRateGate());
