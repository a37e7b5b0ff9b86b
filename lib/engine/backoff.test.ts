import { describe, expect, it } from 'vitest';
import { backoffMs, TRANSPORT_BACKOFF_DEFAULT, transportBackoffMs, transportBackoffRange } from './backoff';

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

describe('transportBackoffMs (transport.backoff: 5xx, dropped connections, timeouts)', () => {
  const b = TRANSPORT_BACKOFF_DEFAULT;
  const none = () => 0; // nothing taken off

  it('defaults to 0.5 s doubling up to 8 s, the field norm, and not to on_rate_limit.default_wait', () => {
    expect([0, 1, 2, 3, 4, 5, 30].map((i) => transportBackoffMs(i, b, none))).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('jitter only shortens a wait, by at most its fraction, so the cap stays a bound', () => {
    expect(transportBackoffMs(0, b, high)).toBe(375); // just under 25% off 500
    expect(transportBackoffMs(20, b, high)).toBe(6000);
    expect(transportBackoffMs(20, b, none)).toBe(8000);
    expect(transportBackoffRange(1, b)).toEqual({ minMs: 750, maxMs: 1000 });
  });

  it('full jitter draws anywhere from no wait to the whole wait; none keeps it exact', () => {
    const full = { ...b, jitter: 1 };
    expect(transportBackoffMs(1, full, high)).toBe(0);
    expect(transportBackoffMs(1, full, mid)).toBe(500);
    expect(transportBackoffMs(1, { ...b, jitter: 0 }, high)).toBe(1000);
  });

  it('factor 1 waits base every time; a huge factor or index is held at the cap', () => {
    expect([0, 1, 5].map((i) => transportBackoffMs(i, { baseMs: 300, factor: 1, capMs: 8000, jitter: 0 }, none))).toEqual([300, 300, 300]);
    expect(transportBackoffMs(5000, { baseMs: 300, factor: 10, capMs: 2000, jitter: 0 }, none)).toBe(2000);
  });
});
