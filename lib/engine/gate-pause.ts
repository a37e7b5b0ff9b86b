// The pause of one model (seed: "A rate limit (429) also pauses every other call of the same model
// until the wait is over"): until when, why, the 429 behind it, and the calls sleeping it out —
// woken early when it is cleared or, over a cluster store, when the stored pause changes.
import { linkAbort } from './abort-link';
import { MAX_TIMER_MS } from './clock';
import type { Clock, PauseOrigin } from './types';

/** abort reasons of a sleep through the pause */
const CLEARED = Symbol('pause cleared');
const CHANGED = Symbol('the stored pause changed');

/** subscribes to changes of the model's stored pause (ClusterPauses.watch); returns the unsubscribe */
export type WatchPause = (onChange: () => void) => () => void;

export class PausePolicy {
  /** 0: no pause */
  until = 0;
  reason = '';
  origin: PauseOrigin | null = null;
  /** the pause the shared store gave at the last look (cluster: a pause it no longer has was cleared) */
  sharedUntil: number | null = null;
  /** the sleeps of calls waiting out the pause, woken early when it is cleared */
  private readonly sleepers = new Set<AbortController>();

  /**
   * Pauses until `until` (a later pause wins); returns whether this extended it. A 429 answering a
   * request sent (`sentAt`) before the pause in force began, asking no longer a wait than the 429
   * that began it, is the same limit told again: it does not push the pause later.
   */
  extend(until: number, reason: string, origin?: PauseOrigin, sentAt?: number): boolean {
    if (until <= this.until) return false;
    const began = this.origin;
    if (sentAt !== undefined && origin && began && sentAt <= began.setAt && origin.setAt < this.until && origin.askedMs <= began.askedMs) return false;
    this.until = until;
    this.reason = reason;
    this.origin = origin ?? null;
    return true;
  }

  /** Sets the pause to `until` (0: none) whatever it was, and wakes the calls sleeping it out. */
  forget(until: number): void {
    this.until = until;
    if (until === 0) {
      this.reason = '';
      this.origin = null;
    }
    for (const sleeper of this.sleepers) sleeper.abort(CLEARED);
  }

  /**
   * Sleeps out (part of) the pause; returns early when it is cleared or the stored pause changes
   * (the caller looks again: a longer pause from another process is waited out too), rejects on abort.
   */
  async sleepOut(ms: number, clock: Clock, signal?: AbortSignal, watch?: WatchPause): Promise<{ cleared: boolean }> {
    const { ac, unlink } = linkAbort(signal);
    this.sleepers.add(ac);
    const unwatch = watch?.(() => ac.abort(CHANGED));
    try {
      await clock.sleep(Math.min(ms, MAX_TIMER_MS), ac.signal);
      return { cleared: false };
    } catch (err) {
      if (ac.signal.reason !== CLEARED && ac.signal.reason !== CHANGED) throw err;
      return { cleared: ac.signal.reason === CLEARED };
    } finally {
      unwatch?.();
      this.sleepers.delete(ac);
      unlink();
    }
  }
}
