// The rate gate over a shared store (DESIGN: "One gate across the cluster"): a pause another
// process wrote is a pause here too, and over a cluster store (PostgreSQL) the stored pause is the
// truth and the probe after a pause is claimed cluster-wide — one probe per model, not per process.
import { abortReason, linkAbort } from './abort-link';
import { MAX_TIMER_MS } from './clock';
import type { ModelGate } from './gate-model';
import type { WaitBound } from './gate-waits';
import type { ClusterPauses, ProbeClaim, SharedPauses } from './types';

/** a call that lost the cluster's probe claim asks again no sooner than this (a guard against a busy loop) */
const MIN_CLAIM_RETRY_MS = 10;
const CHANGED = Symbol('the stored pause changed');

/**
 * Reads the shared store's pause of the model into `g`. Over a cluster store the stored pause is
 * the truth: one this process had from the store and the store no longer has (cleared on
 * /providers, lifted by another process's probe, replaced by a shorter one) is gone here too.
 */
export function syncShared(model: string, g: ModelGate, shared?: SharedPauses): void {
  const until = shared?.get(model) ?? null;
  const p = g.pause;
  if (until !== null && until > p.until) g.paused(until, 'rate limited in another process');
  else if (shared?.cluster && p.sharedUntil !== null && p.sharedUntil >= p.until && (until ?? 0) < p.until) p.forget(until ?? 0);
  p.sharedUntil = until;
}

/**
 * Waits while another process probes: until the model's stored pause or claim changes (the probe
 * came back, a new pause began), the claim lapses (`retryAt`: its owner died) or the deadline;
 * false when the deadline passed.
 */
async function awaitClusterProbe(model: string, cluster: ClusterPauses, retryAt: number, bound: WaitBound): Promise<boolean> {
  const { clock } = bound;
  const { ac, unlink } = linkAbort(bound.signal);
  const unwatch = cluster.watch(model, () => ac.abort(CHANGED));
  try {
    const now = clock.now();
    const ms = Math.min(Math.max(retryAt, now + MIN_CLAIM_RETRY_MS), bound.deadline) - now;
    if (ms > 0) await clock.sleep(Math.min(ms, MAX_TIMER_MS), ac.signal);
  } catch (err) {
    if (ac.signal.reason !== CHANGED) throw err;
  } finally {
    unwatch();
    unlink();
  }
  return clock.now() < bound.deadline;
}

export type ClusterClaim = 'won' | 'none' | 'again' | 'budget';

/**
 * Over a cluster store this process's probe must first win the cluster's claim: `won` — it goes
 * as the probe; `none` — nothing is paused in the cluster, it goes as an ordinary call and so do
 * the others; `again` — another process probes (or a new pause began): the slot and the local
 * probe were handed back after a wait, look again; `budget` — the deadline passed meanwhile.
 * Holds the slot and the local probe (probe.inFlight) on entry.
 */
export async function claimClusterProbe(model: string, g: ModelGate, shared: SharedPauses & { cluster: ClusterPauses }, bound: WaitBound): Promise<ClusterClaim> {
  const { cluster } = shared;
  let claim: ProbeClaim;
  try {
    claim = await cluster.claimProbe(model, bound.clock.now());
  } catch {
    claim = { kind: 'won' }; // the store could not be asked: the probe stays one per process
  }
  if (bound.signal?.aborted) {
    if (claim.kind === 'won') cluster.probeDone(model, 'not_sent');
    g.slots.release();
    g.probe.end(true);
    throw abortReason(bound.signal);
  }
  if (claim.kind === 'won') return 'won';
  if (claim.kind === 'none') {
    g.probe.end(false);
    return 'none';
  }
  g.slots.release();
  try {
    // a new pause the claim read is waited out at the top of the loop
    syncShared(model, g, shared);
    if (g.pause.until > bound.clock.now()) return 'again';
    return (await awaitClusterProbe(model, cluster, claim.retryAt, bound)) ? 'again' : 'budget';
  } finally {
    g.probe.end(true); // hand the local probe over: the next waiter of this process claims
  }
}
