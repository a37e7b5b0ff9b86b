import { describe, expect, it } from 'vitest';
import { PausePolicy } from './gate-pause';
import { createManualClock } from './virtual-clock';

const origin = (setAt: number, askedMs: number) => ({ setAt, serverWait: null, askedMs, maxWaitMs: 60_000 });

describe('the pause of one model (gate-pause.ts)', () => {
  it('a later pause wins; an earlier one does not shorten it', () => {
    const p = new PausePolicy();
    expect(p.extend(2000, 'a')).toBe(true);
    expect(p.extend(1500, 'b')).toBe(false);
    expect(p.until).toBe(2000);
    expect(p.reason).toBe('a');
  });

  it('a 429 to a request sent before the pause began, asking no longer a wait, is the same limit told again', () => {
    const p = new PausePolicy();
    p.extend(1000, 'first', origin(0, 1000));
    expect(p.extend(1100, 'again', origin(100, 1000), 0)).toBe(false);
    // asking longer, or sent after the pause began: it pushes the pause later
    expect(p.extend(1200, 'longer', origin(100, 1100), 0)).toBe(true);
    expect(p.extend(1500, 'later', origin(200, 500), 150)).toBe(true);
  });

  it('forgetting the pause wakes the calls sleeping it out, and says it was cleared', async () => {
    const clock = createManualClock(0);
    const p = new PausePolicy();
    p.extend(5000, '429', origin(0, 5000));
    const slept = p.sleepOut(5000, clock);
    p.forget(0);
    await expect(slept).resolves.toEqual({ cleared: true });
    expect([p.until, p.reason, p.origin]).toEqual([0, '', null]);
  });

  it('a change of the stored pause wakes the sleep without clearing; the caller’s abort rejects with its reason', async () => {
    const clock = createManualClock(0);
    const p = new PausePolicy();
    let changed = () => {};
    const woke = p.sleepOut(5000, clock, undefined, (f) => ((changed = f), () => {}));
    changed();
    await expect(woke).resolves.toEqual({ cleared: false });
    const ac = new AbortController();
    const stopped = p.sleepOut(5000, clock, ac.signal);
    ac.abort('stop');
    await expect(stopped).rejects.toBe('stop');
    expect(clock.pending()).toBe(0);
  });
});
