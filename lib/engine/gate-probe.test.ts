import { describe, expect, it } from 'vitest';
import { ProbePolicy } from './gate-probe';
import { createManualClock } from './virtual-clock';

describe('the probe after a pause (gate-probe.ts)', () => {
  it('is busy only while a needed probe is in flight; a probe without a 429 closes it', async () => {
    const clock = createManualClock(0);
    const p = new ProbePolicy();
    expect(p.busy).toBe(false);
    p.trip();
    expect(p.busy).toBe(false);
    p.begin();
    expect(p.busy).toBe(true);
    const waiting = p.wait({ clock, deadline: 10_000 });
    p.end(false);
    await expect(waiting).resolves.toBe(true);
    expect([p.needed, p.inFlight]).toEqual([false, false]);
  });

  it('a probe that got a 429 leaves the next call to probe again', () => {
    const p = new ProbePolicy();
    p.trip();
    p.begin();
    p.end(true);
    expect([p.needed, p.inFlight]).toEqual([true, false]);
  });

  it('a wait for the probe gives up at the deadline', async () => {
    const clock = createManualClock(0);
    const p = new ProbePolicy();
    p.trip();
    p.begin();
    const waiting = p.wait({ clock, deadline: 1000 });
    clock.advance(1000);
    await expect(waiting).resolves.toBe(false);
  });
});
