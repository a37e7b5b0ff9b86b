// The rate-limit gate (DESIGN: Transport retry and rate limits; seed: "A rate limit (429) also
// pauses every other call of the same model until the wait is over"). Per model string: a pause
// until a time, one probe after a pause (the others follow only when it did not get another 429),
// and `max_concurrency` slots. Every wait here is bounded: a pause by on_rate_limit.max_wait (a
// 429 never pauses longer, `pauseFor429`), and every wait of a call — a pause, the probe, a slot —
// by the call's own transport budget (`deadline`). This is the engine's only process-wide state:
// `defaultRateGate`; tests make their own. Over a cluster store (`SharedPauses.cluster`,
// PostgreSQL) the stored pause is the truth and the probe is claimed cluster-wide: one probe per
// model across every process, not one per process (DESIGN: "One gate across the cluster").
import { MAX_TIMER_MS } from './clock';
import type { Clock, ClusterPauses, PauseOrigin, ProbeClaim, SharedPauses } from './types';

export interface AcquireOptions {
  clock: Clock;
  /** the provider's max_concurrency */
  maxConcurrency: number;
  /** a pause longer than this is not waited out (on_rate_limit.max_wait) */
  maxWaitMs: number;
  /** no wait at the gate goes past this time (the end of the attempt's transport budget) */
  deadline: number;
  /**
   * This call's own retry time after its 429 (the wait its answer asked for, from its headers):
   * it goes no sooner, whenever the model's pause ends. Cleared pauses clear it too.
   */
  notBefore?: number;
  signal?: AbortSignal;
  shared?: SharedPauses;
}

export interface GateLease {
  /** clock time spent at the gate: pauses, waiting for the probe, waiting for a slot */
  waitedMs: number;
  /** this call goes first after a pause */
  probe: boolean;
  /**
   * The probe's request was accepted (its 2xx headers are in): the calls waiting behind it go at
   * once, without waiting for its body or stream; the lease keeps its slot until `release`.
   */
  accepted(): void;
  /** frees the slot; a probe that did not get a 429 lets the others through (unless `accepted` did) */
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
  /**
   * Pauses the model until `pausedUntil` (a later pause wins); returns whether this extended it.
   * `sentAt`: when the request behind the 429 was sent. A 429 answering a request sent before the
   * pause in force began, asking no longer a wait than the 429 that began it, is the same limit
   * told again: it does not push the pause later (its own call still waits its own time,
   * AcquireOptions.notBefore).
   */
  pause(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin, sentAt?: number): boolean;
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
  /** the pause the shared store gave at the last look (cluster: a pause it no longer has was cleared) */
  sharedUntil: number | null;
}

/** abort reasons of the gate's own waits */
const CLEARED = Symbol('pause cleared');
const CHANGED = Symbol('the stored pause changed');
const DEADLINE = Symbol('transport budget spent');
/** a wait's deadline timer no longer needed: a reason of our own (an abort without one builds a DOMException and its stack) */
const WAIT_OVER = Symbol('the wait is over');
/** a call that lost the cluster's probe claim asks again no sooner than this (a guard against a busy loop) */
const MIN_CLAIM_RETRY_MS = 10;

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
        sharedUntil: null,
      };
      models.set(model, s);
    }
    return s;
  };

  const pause = (model: string, until: number, reason: string, origin?: PauseOrigin, sentAt?: number): boolean => {
    const s = stateOf(model);
    s.probeNeeded = true;
    if (until <= s.pausedUntil) return false;
    const began = s.origin;
    if (sentAt !== undefined && origin && began && sentAt <= began.setAt && origin.setAt < s.pausedUntil && origin.askedMs <= began.askedMs) return false;
    s.pausedUntil = until;
    s.reason = reason;
    s.origin = origin ?? null;
    return true;
  };

  /** Sets the pause to `until` (0: none) whatever it was, and wakes the calls sleeping it out. */
  const forget = (s: ModelState, until: number) => {
    s.pausedUntil = until;
    if (until === 0) {
      s.reason = '';
      s.origin = null;
    }
    // probeNeeded stays: as when a pause runs out, one call goes first
    for (const sleeper of s.sleepers) sleeper.abort(CLEARED);
  };

  const clear = (model: string): boolean => {
    const s = models.get(model);
    if (!s || s.pausedUntil === 0) return false;
    forget(s, 0);
    return true;
  };

  /**
   * A pause another process wrote is a pause here too. Over a cluster store the stored pause is
   * the truth: one this process had from the store and the store no longer has (cleared on
   * /providers, lifted by another process's probe, replaced by a shorter one) is gone here too.
   */
  const syncShared = (model: string, s: ModelState, shared?: SharedPauses) => {
    const until = shared?.get(model) ?? null;
    if (until !== null && until > s.pausedUntil) pause(model, until, 'rate limited in another process');
    else if (shared?.cluster && s.sharedUntil !== null && s.sharedUntil >= s.pausedUntil && (until ?? 0) < s.pausedUntil) forget(s, until ?? 0);
    s.sharedUntil = until;
  };

  /**
   * Sleeps out (part of) a pause; returns early when the pause is cleared or the cluster's stored
   * pause changes (the caller looks again: a longer pause from another process is waited out too),
   * rejects on abort.
   */
  const sleepOutPause = async (model: string, s: ModelState, ms: number, clock: Clock, signal?: AbortSignal, cluster?: ClusterPauses): Promise<{ cleared: boolean }> => {
    const { ac, unlink } = linked(signal);
    s.sleepers.add(ac);
    const unwatch = cluster?.watch(model, () => ac.abort(CHANGED));
    try {
      await clock.sleep(Math.min(ms, MAX_TIMER_MS), ac.signal);
      return { cleared: false };
    } catch (err) {
      if (ac.signal.reason !== CLEARED && ac.signal.reason !== CHANGED) throw err;
      return { cleared: ac.signal.reason === CLEARED };
    } finally {
      unwatch?.();
      s.sleepers.delete(ac);
      unlink();
    }
  };

  /** The probe of this process is over: the waiters behind it go on (first probing again when it got a 429). */
  const endProbe = (s: ModelState, rateLimited: boolean) => {
    s.probeInFlight = false;
    // a 429 has already set a new pause (and left probeNeeded on): the next waiter probes again
    if (!rateLimited) s.probeNeeded = false;
    const done = s.resolveProbe;
    s.resolveProbe = null;
    s.probeDone = null;
    done?.();
  };

  const releaseSlot = (s: ModelState) => {
    const next = s.slotQueue.shift();
    if (next)
      next(); // hand the slot over: `active` stays the same
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

  /**
   * Waits while another process probes: until the model's stored pause or claim changes (the probe
   * came back, a new pause began), the claim lapses (`retryAt`: its owner died) or the deadline;
   * false when the deadline passed.
   */
  const awaitClusterProbe = async (model: string, cluster: ClusterPauses, retryAt: number, opts: AcquireOptions): Promise<boolean> => {
    const { clock } = opts;
    const { ac, unlink } = linked(opts.signal);
    const unwatch = cluster.watch(model, () => ac.abort(CHANGED));
    try {
      const now = clock.now();
      const ms = Math.min(Math.max(retryAt, now + MIN_CLAIM_RETRY_MS), opts.deadline) - now;
      if (ms > 0) await clock.sleep(Math.min(ms, MAX_TIMER_MS), ac.signal);
    } catch (err) {
      if (ac.signal.reason !== CHANGED) throw err;
    } finally {
      unwatch();
      unlink();
    }
    return clock.now() < opts.deadline;
  };

  /**
   * Over a cluster store this process's probe must first win the cluster's claim: `won` — it goes
   * as the probe; `none` — nothing is paused in the cluster, it goes as an ordinary call and so do
   * the others; `again` — another process probes (or a new pause began): the slot and the local
   * probe were handed back after a wait, look again; `budget` — the deadline passed meanwhile.
   * Holds the slot and the local probe (probeInFlight) on entry.
   */
  const claimClusterProbe = async (model: string, s: ModelState, cluster: ClusterPauses, opts: AcquireOptions): Promise<'won' | 'none' | 'again' | 'budget'> => {
    let claim: ProbeClaim;
    try {
      claim = await cluster.claimProbe(model, opts.clock.now());
    } catch {
      claim = { kind: 'won' }; // the store could not be asked: the probe stays one per process
    }
    if (opts.signal?.aborted) {
      if (claim.kind === 'won') cluster.probeDone(model, 'not_sent');
      releaseSlot(s);
      endProbe(s, true);
      throw abortError(opts.signal);
    }
    if (claim.kind === 'won') return 'won';
    if (claim.kind === 'none') {
      endProbe(s, false);
      return 'none';
    }
    releaseSlot(s);
    try {
      // a new pause the claim read is waited out at the top of the loop
      syncShared(model, s, opts.shared);
      if (s.pausedUntil > opts.clock.now()) return 'again';
      return (await awaitClusterProbe(model, cluster, claim.retryAt, opts)) ? 'again' : 'budget';
    } finally {
      endProbe(s, true); // hand the local probe over: the next waiter of this process claims
    }
  };

  const acquire = async (model: string, opts: AcquireOptions): Promise<Acquired> => {
    const { clock, signal } = opts;
    const cluster = opts.shared?.cluster;
    const s = stateOf(model);
    const start = clock.now();
    const refuse = (limit: 'max_wait' | 'budget', waitingFor: GateWait): Acquired => ({
      ok: false,
      limit,
      waitingFor,
      pausedUntil: waitingFor === 'pause' ? s.pausedUntil : null,
      waitedMs: clock.now() - start,
    });
    // this call's own retry time after its 429; an editor's clear forgets it with the pause
    let notBefore = opts.notBefore ?? 0;
    s.waiting++;
    try {
      // a process that starts mid-pause knows of it before its first call goes
      if (cluster) await untilAborted(cluster.ready(), signal);
      for (;;) {
        if (signal?.aborted) throw abortError(signal);
        syncShared(model, s, opts.shared);
        const now = clock.now();
        if (s.pausedUntil > now) {
          // don't sleep into certain failure (DESIGN: Transport retry and rate limits)
          const left = s.pausedUntil - now;
          if (left > opts.maxWaitMs) return refuse('max_wait', 'pause');
          if (s.pausedUntil > opts.deadline) return refuse('budget', 'pause');
          if ((await sleepOutPause(model, s, left, clock, signal, cluster)).cleared) notBefore = 0;
          continue;
        }
        if (notBefore > now) {
          if (notBefore > opts.deadline) return refuse('budget', 'pause');
          if ((await sleepOutPause(model, s, notBefore - now, clock, signal, cluster)).cleared) notBefore = 0;
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
        let probe = s.probeNeeded;
        if (probe) {
          s.probeInFlight = true;
          s.probeDone = new Promise<void>((r) => (s.resolveProbe = r));
        }
        // one probe per model across the cluster, not one per process
        const claimed = probe && cluster ? await claimClusterProbe(model, s, cluster, opts) : null;
        if (claimed === 'again') continue;
        if (claimed === 'budget') return refuse('budget', 'probe');
        if (claimed === 'none') probe = false;
        let released = false;
        let probing = probe;
        // the probe's answer lets the others through once: at its accepted headers, or at its end
        const settle = (rateLimited: boolean) => {
          if (!probing) return;
          probing = false;
          if (claimed === 'won') cluster!.probeDone(model, rateLimited ? 'rate_limited' : 'ok');
          endProbe(s, rateLimited);
        };
        const lease: GateLease = {
          waitedMs: clock.now() - start,
          probe,
          accepted: () => settle(false),
          release: ({ rateLimited }) => {
            if (released) return;
            released = true;
            releaseSlot(s);
            settle(rateLimited);
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
