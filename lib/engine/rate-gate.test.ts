import { describe, expect, it } from 'vitest';
import { createRateGate, type AcquireOptions, type GateLease } from './rate-gate';
import type { SharedPauses } from './types';
import { createManualClock } from './virtual-clock';

const flush = () => new Promise((r) => setImmediate(r));

function setup() {
  const clock = createManualClock(0);
  const gate = createRateGate();
  const opts = (over: Partial<AcquireOptions> = {}): AcquireOptions => ({
    clock,
    maxConcurrency: 16,
    maxWaitMs: 60_000,
    deadline: Number.MAX_SAFE_INTEGER,
    ...over,
  });
  const lease = async (model: string, over?: Partial<AcquireOptions>): Promise<GateLease> => {
    const a = await gate.acquire(model, opts(over));
    if (!a.ok) throw new Error(`gate refused: ${a.limit}`);
    return a.lease;
  };
  return { clock, gate, opts, lease };
}

describe('rate gate', () => {
  it('passes calls straight through when nothing is paused', async () => {
    const { lease } = setup();
    const l = await lease('p:m');
    expect(l.waitedMs).toBe(0);
    expect(l.probe).toBe(false);
  });

  it('a pause holds every call of that model until it is over, and records the wait', async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 2000, '429');
    let got: GateLease | null = null;
    void lease('p:m').then((l) => (got = l));
    await flush();
    expect(got).toBeNull();
    clock.advance(1999);
    await flush();
    expect(got).toBeNull();
    clock.advance(1);
    await flush();
    expect(got).not.toBeNull();
    expect(got!.waitedMs).toBe(2000);
    expect(got!.probe).toBe(true);
  });

  it('does not pause another model', async () => {
    const { gate, lease } = setup();
    gate.pause('p:m', 2000, '429');
    const l = await lease('p:other');
    expect(l.waitedMs).toBe(0);
  });

  it('after a pause one probe goes first; the others follow when it got no 429', async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 1000, '429');
    const order: string[] = [];
    const leases: Record<string, GateLease> = {};
    for (const name of ['a', 'b', 'c']) void lease('p:m').then((l) => (order.push(name), (leases[name] = l)));
    clock.advance(1000);
    await flush();
    expect(order).toEqual(['a']);
    expect(leases.a!.probe).toBe(true);
    leases.a!.release({ rateLimited: false });
    await flush();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(leases.b!.probe).toBe(false);
  });

  it('a probe that gets another 429 keeps the others paused until the new wait is over', async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 1000, '429');
    const order: string[] = [];
    const leases: Record<string, GateLease> = {};
    for (const name of ['a', 'b']) void lease('p:m').then((l) => (order.push(name), (leases[name] = l)));
    clock.advance(1000);
    await flush();
    gate.pause('p:m', 3000, '429 again');
    leases.a!.release({ rateLimited: true });
    await flush();
    expect(order).toEqual(['a']);
    clock.advance(2000);
    await flush();
    expect(order).toEqual(['a', 'b']);
    expect(leases.b!.probe).toBe(true); // b probes the second pause
  });

  it('max_concurrency limits calls in flight per model', async () => {
    const { lease } = setup();
    const a = await lease('p:m', { maxConcurrency: 1 });
    let b: GateLease | null = null;
    void lease('p:m', { maxConcurrency: 1 }).then((l) => (b = l));
    await flush();
    expect(b).toBeNull();
    a.release({ rateLimited: false });
    await flush();
    expect(b).not.toBeNull();
  });

  it('refuses at once a pause longer than max_wait, or than the budget left', async () => {
    const { gate, opts } = setup();
    gate.pause('p:m', 90_000, '429');
    expect(await gate.acquire('p:m', opts({ maxWaitMs: 60_000 }))).toMatchObject({ ok: false, limit: 'max_wait', pausedUntil: 90_000 });
    expect(await gate.acquire('p:m', opts({ maxWaitMs: 120_000, deadline: 10_000 }))).toMatchObject({ ok: false, limit: 'budget' });
  });

  it('honours a pause written by another process (SharedPauses)', async () => {
    const { clock, gate, lease } = setup();
    const store = new Map<string, number>([['p:m', 500]]);
    const shared: SharedPauses = { get: (m) => store.get(m) ?? null, set: (m, u) => void store.set(m, u) };
    let got: GateLease | null = null;
    void lease('p:m', { shared }).then((l) => (got = l));
    await flush();
    expect(got).toBeNull();
    clock.advance(500);
    await flush();
    expect(got!.waitedMs).toBe(500);
    expect(gate.pausedUntil('p:m')).toBe(500);
  });

  it('an aborted wait rejects and leaves no slot taken', async () => {
    const { gate, opts } = setup();
    gate.pause('p:m', 1000, '429');
    const ac = new AbortController();
    const p = gate.acquire('p:m', opts({ signal: ac.signal }));
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(gate.snapshot(2000)).toEqual([]);
  });
});
