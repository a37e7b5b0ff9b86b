// The half-open state after a pause (DESIGN: Transport retry and rate limits): once a model was
// paused, one call goes first as the probe; the others follow only when it did not get another 429.
import { waitWithin, type WaitBound } from './gate-waits';

export class ProbePolicy {
  /** set by a pause; cleared when a probe comes back without a 429 */
  needed = false;
  inFlight = false;
  private done: Promise<void> | null = null;
  private resolveDone: (() => void) | null = null;

  /** a pause was set (or told again): the next call to go is a probe */
  trip(): void {
    this.needed = true;
  }

  /** a probe is out and the others wait for it */
  get busy(): boolean {
    return this.needed && this.inFlight;
  }

  /** this call goes as the probe */
  begin(): void {
    this.inFlight = true;
    this.done = new Promise<void>((r) => (this.resolveDone = r));
  }

  /** The probe is over: the waiters behind it go on (first probing again when it got a 429). */
  end(rateLimited: boolean): void {
    this.inFlight = false;
    // a 429 has already set a new pause (and left `needed` on): the next waiter probes again
    if (!rateLimited) this.needed = false;
    const done = this.resolveDone;
    this.resolveDone = null;
    this.done = null;
    done?.();
  }

  /** Waits for the probe in flight; false when the deadline passes first. */
  wait(bound: WaitBound): Promise<boolean> {
    return waitWithin(this.done ?? Promise.resolve(), bound);
  }
}
