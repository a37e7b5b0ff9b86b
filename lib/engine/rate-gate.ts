// The rate-limit gate (DESIGN: Transport retry and rate limits; seed: "A rate limit (429) also
// pauses every other call of the same model until the wait is over"). Per model string: a pause
// until a time, one probe after a pause (the others follow only when it did not get another 429),
// and `max_concurrency` slots. This is the engine's only process-wide state: `defaultRateGate`;
// tests make their own.
import type { Clock, SharedPauses } from './types';

export interface AcquireOptions {
  clock: Clock;
  /** the provider's max_concurrency */
  maxConcurrency: number;
  /** a pause longer than this is not waited out (on_rate_limit.max_wait) */
  maxWaitMs: number;
  /** nor one that would end after this time (the attempt's transport budget) */
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

export type Acquired =
  | { ok: true; lease: GateLease }
  | {
      ok: false;
      /** which limit the pause exceeds */
      limit: 'max_wait' | 'budget';
      pausedUntil: number;
      waitedMs: number;
    };

export interface GatePause {
  model: string;
  pausedUntil: number;
  reason: string;
  inFlight: number;
  waiting: number;
}

export interface RateGate {
  acquire(model: string, opts: AcquireOptions): Promise<Acquired>;
  /** pauses the model until `pausedUntil` (a later pause wins); returns whether this extended it */
  pause(model: string, pausedUntil: number, reason: string): boolean;
  pausedUntil(model: string): number | null;
  /** current pauses and load, for the providers page */
  snapshot(now: number): GatePause[];
}

interface ModelState {
  pausedUntil: number;
  reason: string;
  /** set by a pause; cleared when a probe comes back without a 429 */
  probeNeeded: boolean;
  probeInFlight: boolean;
  probeDone: Promise<void> | null;
  resolveProbe: (() => void) | null;
  active: number;
  slotQueue: (() => void)[];
  waiting: number;
}

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

export function createRateGate(): RateGate {
  const models = new Map<string, ModelState>();

  const stateOf = (model: string): ModelState => {
    let s = models.get(model);
    if (!s) {
      s = { pausedUntil: 0, reason: '', probeNeeded: false, probeInFlight: false, probeDone: null, resolveProbe: null, active: 0, slotQueue: [], waiting: 0 };
      models.set(model, s);
    }
    return s;
  };

  const pause = (model: string, until: number, reason: string): boolean => {
    const s = stateOf(model);
    s.probeNeeded = true;
    if (until <= s.pausedUntil) return false;
    s.pausedUntil = until;
    s.reason = reason;
    return true;
  };

  /** A pause another process wrote is a pause here too. */
  const syncShared = (model: string, s: ModelState, shared?: SharedPauses) => {
    const until = shared?.get(model) ?? null;
    if (until !== null && until > s.pausedUntil) pause(model, until, 'rate limited in another process');
  };

  const releaseSlot = (s: ModelState) => {
    const next = s.slotQueue.shift();
    if (next) next(); // hand the slot over: `active` stays the same
    else s.active--;
  };

  const takeSlot = async (s: ModelState, max: number, signal?: AbortSignal): Promise<void> => {
    if (s.active < Math.max(1, max)) {
      s.active++;
      return;
    }
    let resolveSlot!: () => void;
    const granted = new Promise<void>((r) => (resolveSlot = r));
    s.slotQueue.push(resolveSlot);
    try {
      await untilAborted(granted, signal);
    } catch (err) {
      const i = s.slotQueue.indexOf(resolveSlot);
      if (i >= 0) s.slotQueue.splice(i, 1);
      else releaseSlot(s); // granted just as we gave up: pass it on
      throw err;
    }
  };

  const acquire = async (model: string, opts: AcquireOptions): Promise<Acquired> => {
    const { clock, signal } = opts;
    const s = stateOf(model);
    const start = clock.now();
    s.waiting++;
    try {
      for (;;) {
        if (signal?.aborted) throw abortError(signal);
        syncShared(model, s, opts.shared);
        const now = clock.now();
        if (s.pausedUntil > now) {
          // don't sleep into certain failure (DESIGN: Transport retry and rate limits)
          const left = s.pausedUntil - now;
          if (left > opts.maxWaitMs) return { ok: false, limit: 'max_wait', pausedUntil: s.pausedUntil, waitedMs: now - start };
          if (s.pausedUntil > opts.deadline) return { ok: false, limit: 'budget', pausedUntil: s.pausedUntil, waitedMs: now - start };
          await clock.sleep(left, signal);
          continue;
        }
        if (s.probeNeeded && s.probeInFlight) {
          await untilAborted(s.probeDone!, signal);
          continue;
        }
        await takeSlot(s, opts.maxConcurrency, signal);
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
    pausedUntil: (model) => {
      const s = models.get(model);
      return s && s.pausedUntil > 0 ? s.pausedUntil : null;
    },
    snapshot: (now) =>
      [...models.entries()]
        .filter(([, s]) => s.pausedUntil > now || s.active > 0 || s.waiting > 0)
        .map(([model, s]) => ({ model, pausedUntil: s.pausedUntil, reason: s.reason, inFlight: s.active, waiting: s.waiting })),
  };
}

/** The process-wide gate: every call of a model string in this process shares it. */
export const defaultRateGate: RateGate = createRateGate();
