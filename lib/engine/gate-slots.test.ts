import { describe, expect, it } from 'vitest';
import { SlotPolicy } from './gate-slots';
import { createManualClock } from './virtual-clock';

describe('the slots of one model (gate-slots.ts)', () => {
  it('takes free slots at once and hands a freed one to the first in the queue', async () => {
    const clock = createManualClock(0);
    const s = new SlotPolicy();
    expect(s.take(2, { clock, deadline: 1000 })).toBe(true);
    expect(s.take(2, { clock, deadline: 1000 })).toBe(true);
    const third = s.take(2, { clock, deadline: 1000 });
    expect(third).toBeInstanceOf(Promise);
    s.release();
    await expect(third).resolves.toBe(true);
    expect(s.active).toBe(2);
  });

  it('a call that gives up at the deadline leaves the queue and leaks no slot', async () => {
    const clock = createManualClock(0);
    const s = new SlotPolicy();
    s.take(1, { clock, deadline: 1000 });
    const queued = s.take(1, { clock, deadline: 500 });
    clock.advance(500);
    await expect(queued).resolves.toBe(false);
    s.release();
    expect(s.active).toBe(0);
  });

  it('max_concurrency below 1 still lets one call through', () => {
    const s = new SlotPolicy();
    expect(s.tryTake(0)).toBe(true);
    expect(s.tryTake(0)).toBe(false);
  });
});
