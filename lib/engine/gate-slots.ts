// The model's `max_concurrency` slots (a bulkhead): a call takes one or queues for one, first come
// first served; a freed slot is handed to the first in the queue.
import { waitWithin, type WaitBound } from './gate-waits';

export class SlotPolicy {
  /** slots taken */
  active = 0;
  private readonly queue: (() => void)[] = [];

  /** Takes a free slot at once; false when all are in flight. */
  tryTake(maxConcurrency: number): boolean {
    if (this.active >= Math.max(1, maxConcurrency)) return false;
    this.active++;
    return true;
  }

  /** Takes a slot, queueing for one when all are in flight; false when the deadline passes first. */
  take(maxConcurrency: number, bound: WaitBound): boolean | Promise<boolean> {
    if (this.tryTake(maxConcurrency)) return true;
    let grant!: () => void;
    const granted = new Promise<void>((r) => (grant = r));
    this.queue.push(grant);
    return waitWithin(granted, bound, () => {
      const i = this.queue.indexOf(grant);
      if (i >= 0) this.queue.splice(i, 1);
      else this.release(); // granted just as we gave up: pass it on
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next)
      next(); // hand the slot over: `active` stays the same
    else this.active--;
  }
}
