// The real sleep and timers (clock.ts) under vitest's fake timers, which behave like Node's: a delay
// above 2^31-1 ms fires after 1 ms. No real time passes.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, realTimer, sleep } from './clock';

const HOURS_600 = 600 * 3600 * 1000; // 2.16e9 ms, past MAX_TIMER_MS

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('sleep', () => {
  it('a sleep of 600 h does not end after 1 ms (Node would overflow the timer), but does end after 600 h', async () => {
    expect(HOURS_600).toBeGreaterThan(MAX_TIMER_MS);
    let done = false;
    void sleep(HOURS_600).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(10);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(HOURS_600 - MAX_TIMER_MS);
    expect(done).toBe(true);
  });

  it.each([Infinity, NaN])('a sleep of %s ms is refused, not served as 1 ms', async (ms) => {
    await expect(sleep(ms)).rejects.toThrow(RangeError);
  });

  it('a negative or zero sleep ends at once', async () => {
    await expect(sleep(-5)).resolves.toBeUndefined();
    await expect(sleep(0)).resolves.toBeUndefined();
  });

  it('an abort ends a long sleep', async () => {
    const ac = new AbortController();
    const p = sleep(HOURS_600, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});

describe('realTimer', () => {
  it('fires after its full delay, also past MAX_TIMER_MS, and refresh() restarts it', async () => {
    const fired: number[] = [];
    const t = realTimer(HOURS_600, () => fired.push(Date.now()));
    await vi.advanceTimersByTimeAsync(HOURS_600 - 1000);
    expect(fired).toEqual([]);
    t.refresh(); // a full 600 h again from here
    await vi.advanceTimersByTimeAsync(HOURS_600 - 1000);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveLength(1);
  });

  it('a short timer refreshed keeps not firing; cleared, never fires', async () => {
    let n = 0;
    const t = realTimer(100, () => n++);
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(60);
      t.refresh();
    }
    expect(n).toBe(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(n).toBe(1);
    const u = realTimer(100, () => n++);
    u.clear();
    await vi.advanceTimersByTimeAsync(1000);
    expect(n).toBe(1);
  });

  it('refuses a delay that cannot end', () => {
    expect(() => realTimer(Infinity, () => {})).toThrow(RangeError);
  });
});
