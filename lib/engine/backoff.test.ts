import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff';

const opts = { defaultWaitMs: 1000, maxWaitMs: 60_000 };
const mid = () => 0.5; // no jitter
const low = () => 0; // -20%
const high = () => 0.999999; // just under +20%

describe('backoffMs', () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [5, 32_000],
    [6, 60_000], // 64 s capped at max_wait
    [60, 60_000],
  ])('re-try %i without jitter waits %i ms', (i, ms) => {
    expect(backoffMs(i, opts, mid)).toBe(ms);
  });

  it.each([
    ['lowest jitter is -20%', low, 800],
    ['highest jitter is under +20%', high, 1200],
  ] as const)('%s', (_n, random, ms) => {
    expect(backoffMs(0, opts, random)).toBe(ms);
  });

  it('jitter never pushes the wait above max_wait', () => {
    expect(backoffMs(10, { defaultWaitMs: 1000, maxWaitMs: 5000 }, high)).toBe(5000);
  });

  it('a zero default wait stays zero', () => {
    expect(backoffMs(3, { defaultWaitMs: 0, maxWaitMs: 5000 }, high)).toBe(0);
  });
});
