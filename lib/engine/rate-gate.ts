// The rate-limit gate (DESIGN: Transport retry and rate limits; seed: "A rate limit (429) also
// pauses every other call of the same model until the wait is over"). Per model string: a pause
// until a time, one probe after a pause (the others follow only when it did not get another 429),
// and `max_concurrency` slots. Every wait here is bounded: a pause by on_rate_limit.max_wait (a
// 429 never pauses longer, `pauseFor429`), and every wait of a call — a pause, the probe, a slot —
// by the call's own transport budget (`deadline`). This is the engine's only process-wide state:
// `defaultRateGate`; tests make their own. Over a cluster store (`SharedPauses.cluster`,
// PostgreSQL) the stored pause is the truth and the probe is claimed cluster-wide: one probe per
// model across every process, not one per process (DESIGN: "One gate across the cluster").
//
// Each concern is a policy of its own, with its own state and tests: the pause (gate-pause.ts),
// the probe after it (gate-probe.ts), the slots (gate-slots.ts) and the cluster's share
// (gate-cluster-sync.ts). A call passes them as a chain of steps (`wrap`, after cockatiel's
// `wrap(retry, breaker, bulkhead)`): each says go on, look again from the top, or refuse.
import { abortReason } from './abort-link';
import { claimClusterProbe, syncShared, type ClusterClaim } from './gate-cluster-sync';
import { ModelGate } from './gate-model';
import { untilAborted } from './gate-waits';
import type { Clock, ClusterPauses, PauseOrigin, SharedPauses } from './types';

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
  /** Forgets every model — pauses, probes, slots — as a new process knows none (resetDefaultRateGateForTests). */
  reset(): void;
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

/** What one step of the gate says: go on to the next, look again from the top, or refuse the call. */
export type StepResult = 'go' | 'again' | { limit: 'max_wait' | 'budget'; waitingFor: GateWait };

/** One call's passage through the gate: what the steps read and leave for the lease. */
export interface Passage {
  model: string;
  g: ModelGate;
  opts: AcquireOptions;
  cluster: ClusterPauses | undefined;
  /** the clock at the top of this look */
  now: number;
  /** this call's own retry time after its 429; an editor's clear forgets it with the pause */
  notBefore: number;
  /** this call goes as the probe */
  probe: boolean;
  /** what the cluster's probe claim said (null: no claim was made) */
  claimed: ClusterClaim | null;
}

/** A step answers at once when it need not wait, so a free gate costs no extra turn of the event loop. */
export type GateStep = (p: Passage) => StepResult | Promise<StepResult>;

/** Runs the steps in order; the first that does not say `go` answers for all of them. */
export function wrap(...steps: GateStep[]): GateStep {
  const from =
    (first: number): GateStep =>
    (p) => {
      for (let i = first; i < steps.length; i++) {
        const r = steps[i]!(p);
        if (r instanceof Promise) return r.then((done) => (done === 'go' ? from(i + 1)(p) : done));
        if (r !== 'go') return r;
      }
      return 'go';
    };
  return from(0);
}

const bound = (p: Passage) => ({ clock: p.opts.clock, deadline: p.opts.deadline, signal: p.opts.signal });

/** Sleeps `ms` of the pause out; an editor's clear also forgets this call's own retry time. */
const sleepOut = async (p: Passage, ms: number): Promise<StepResult> => {
  const watch = p.cluster && ((onChange: () => void) => p.cluster!.watch(p.model, onChange));
  if ((await p.g.pause.sleepOut(ms, p.opts.clock, p.opts.signal, watch)).cleared) p.notBefore = 0;
  return 'again';
};

/** The model's pause is waited out, unless it is longer than max_wait or the budget (don't sleep into certain failure). */
const pauseStep: GateStep = (p) => {
  syncShared(p.model, p.g, p.opts.shared);
  p.now = p.opts.clock.now();
  const until = p.g.pause.until;
  if (until <= p.now) return 'go';
  if (until - p.now > p.opts.maxWaitMs) return { limit: 'max_wait', waitingFor: 'pause' };
  if (until > p.opts.deadline) return { limit: 'budget', waitingFor: 'pause' };
  return sleepOut(p, until - p.now);
};

/** This call's own retry time after its 429: it goes no sooner, whenever the model's pause ends. */
const notBeforeStep: GateStep = (p) => {
  if (p.notBefore <= p.now) return 'go';
  if (p.notBefore > p.opts.deadline) return { limit: 'budget', waitingFor: 'pause' };
  return sleepOut(p, p.notBefore - p.now);
};

/** The others wait while the probe after a pause is out. */
const probeWaitStep: GateStep = (p) => {
  if (!p.g.probe.busy) return 'go';
  return p.g.probe.wait(bound(p)).then((ok) => (ok ? 'again' : { limit: 'budget', waitingFor: 'probe' }));
};

/** A free slot is taken at once; else the call queues for one (max_concurrency). */
const slotStep: GateStep = (p) => {
  const taken = p.g.slots.take(p.opts.maxConcurrency, bound(p));
  const answer = (ok: boolean): StepResult => (ok ? 'go' : { limit: 'budget', waitingFor: 'slot' });
  return taken instanceof Promise ? taken.then(answer) : answer(taken);
};

/** The world may have changed while the call queued for its slot: then it hands the slot back and looks again. */
const recheckStep: GateStep = (p) => {
  const { g } = p;
  if (g.pause.until <= p.opts.clock.now() && !g.probe.busy) return 'go';
  g.slots.release();
  return 'again';
};

/** The first call after a pause goes as the probe; over a cluster store it must win the cluster's claim first. */
const probeStep: GateStep = (p) => {
  const { g } = p;
  p.probe = g.probe.needed;
  p.claimed = null;
  if (!p.probe) return 'go';
  g.probe.begin();
  if (!p.cluster) return 'go';
  return claimClusterProbe(p.model, g, p.opts.shared as SharedPauses & { cluster: ClusterPauses }, bound(p)).then((claimed): StepResult => {
    p.claimed = claimed;
    if (claimed === 'again') return 'again';
    if (claimed === 'budget') return { limit: 'budget', waitingFor: 'probe' };
    if (claimed === 'none') p.probe = false;
    return 'go';
  });
};

/** The gate's steps, in the order a call passes them. */
const passGate = wrap(pauseStep, notBeforeStep, probeWaitStep, slotStep, recheckStep, probeStep);

/** The lease of a call that passed: it holds a slot, and as the probe, lets the others through once. */
function leaseOf(p: Passage, waitedMs: number): GateLease {
  const { g, cluster, model, claimed } = p;
  let released = false;
  let probing = p.probe;
  // the probe's answer lets the others through once: at its accepted headers, or at its end
  const settle = (rateLimited: boolean) => {
    if (!probing) return;
    probing = false;
    if (claimed === 'won') cluster!.probeDone(model, rateLimited ? 'rate_limited' : 'ok');
    g.probe.end(rateLimited);
  };
  return {
    waitedMs,
    probe: p.probe,
    accepted: () => settle(false),
    release: ({ rateLimited }) => {
      if (released) return;
      released = true;
      g.slots.release();
      settle(rateLimited);
    },
  };
}

async function acquireAt(model: string, g: ModelGate, opts: AcquireOptions): Promise<Acquired> {
  const { clock, signal } = opts;
  const cluster = opts.shared?.cluster;
  const start = clock.now();
  const p: Passage = { model, g, opts, cluster, now: start, notBefore: opts.notBefore ?? 0, probe: false, claimed: null };
  g.waiting++;
  try {
    // a process that starts mid-pause knows of it before its first call goes
    if (cluster) await untilAborted(cluster.ready(), signal);
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      let r = passGate(p);
      if (r instanceof Promise) r = await r;
      if (r === 'again') continue;
      if (r === 'go') return { ok: true, lease: leaseOf(p, clock.now() - start) };
      return { ok: false, ...r, pausedUntil: r.waitingFor === 'pause' ? g.pause.until : null, waitedMs: clock.now() - start };
    }
  } finally {
    g.waiting--;
  }
}

export function createRateGate(): RateGate {
  const models = new Map<string, ModelGate>();
  const gateOf = (model: string): ModelGate => {
    let g = models.get(model);
    if (!g) models.set(model, (g = new ModelGate()));
    return g;
  };
  return {
    acquire: (model, opts) => acquireAt(model, gateOf(model), opts),
    pause: (model, until, reason, origin, sentAt) => gateOf(model).paused(until, reason, origin, sentAt),
    clear: (model) => {
      const g = models.get(model);
      if (!g || g.pause.until === 0) return false;
      // the probe stays needed: as when a pause runs out, one call goes first
      g.pause.forget(0);
      return true;
    },
    pausedUntil: (model) => {
      const until = models.get(model)?.pause.until ?? 0;
      return until > 0 ? until : null;
    },
    snapshot: (now) =>
      [...models.entries()]
        .filter(([, g]) => g.pause.until > now || g.slots.active > 0 || g.waiting > 0)
        .map(([model, g]) => ({ model, pausedUntil: g.pause.until, reason: g.pause.reason, origin: g.pause.origin, inFlight: g.slots.active, waiting: g.waiting })),
    reset: () => models.clear(),
  };
}

/**
 * The process-wide gate: every call of a model string in this process shares it. It lives on
 * globalThis because a bundler may load this module more than once in one process (Next's route
 * bundles, hot reload), and a pause cleared on /providers must be cleared for every run.
 */
const GLOBAL_KEY = Symbol.for('aqven.defaultRateGate');
export const defaultRateGate: RateGate = ((globalThis as { [GLOBAL_KEY]?: RateGate })[GLOBAL_KEY] ??= createRateGate());

/**
 * The process-wide gate as a new process has it: for the integration tests' shared process, between
 * files (test/helpers/shared-process-setup.ts), so that a pause one file's simulator caused — on its
 * virtual clock, perhaps years ahead — holds no later file's calls back.
 */
export function resetDefaultRateGateForTests(): void {
  defaultRateGate.reset();
}
