import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, harness, node, until } from '@/test/engine/helpers';
import { createRateGate, pauseFor429, type AcquireOptions, type GateLease } from '@/lib/engine/rate-gate';
import type { ClusterPauses, PauseOrigin, ProbeOutcome, SharedPauses } from '@/lib/engine/types';
import { createManualClock, createVirtualClock } from '@/lib/engine/virtual-clock';

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

  it("a probe's accepted headers let every waiter go at once, up to max_concurrency, while it keeps its slot", async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 1000, '429');
    const order: string[] = [];
    const leases: Record<string, GateLease> = {};
    for (const name of ['a', 'b', 'c', 'd']) void lease('p:m', { maxConcurrency: 3 }).then((l) => (order.push(name), (leases[name] = l)));
    clock.advance(1000);
    await flush();
    expect(order).toEqual(['a']);
    leases.a!.accepted(); // its status is in; its body or stream is still coming
    await flush();
    expect(order).toEqual(['a', 'b', 'c']); // no time passed: all at once, as many as the slots allow
    expect(clock.now()).toBe(1000);
    leases.a!.release({ rateLimited: false });
    await flush();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(leases.d!.probe).toBe(false);
  });

  it('a rate-limit event after the probe was accepted pauses again, and the next call probes', async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 1000, '429');
    const order: string[] = [];
    const leases: Record<string, GateLease> = {};
    void lease('p:m').then((l) => (order.push('a'), (leases.a = l)));
    clock.advance(1000);
    await flush();
    leases.a!.accepted();
    gate.pause('p:m', 3000, 'a rate-limit error event in the stream');
    leases.a!.release({ rateLimited: true });
    void lease('p:m').then((l) => (order.push('b'), (leases.b = l)));
    await flush();
    expect(order).toEqual(['a']);
    clock.advance(2000);
    await flush();
    expect(order).toEqual(['a', 'b']);
    expect(leases.b!.probe).toBe(true);
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

  it('a burst of 429s to requests sent together pauses from the first; each of those calls still waits its own time', async () => {
    const { clock, gate, lease } = setup();
    const origin = (setAt: number, askedMs = 1000): PauseOrigin => ({ setAt, serverWait: '1', askedMs, maxWaitMs: 60_000 });
    // three requests sent at 0; their 429s (retry-after: 1) come back at 2, 9 and 15
    expect(gate.pause('p:m', 1002, '429', origin(2), 0)).toBe(true);
    expect(gate.pause('p:m', 1009, '429', origin(9), 0)).toBe(false);
    expect(gate.pause('p:m', 1015, '429', origin(15), 0)).toBe(false);
    expect(gate.pausedUntil('p:m')).toBe(1002);
    const order: string[] = [];
    const leases: Record<string, GateLease> = {};
    const take = (name: string, notBefore?: number) => void lease('p:m', { notBefore }).then((l) => (order.push(name), (leases[name] = l)));
    take('never-sent'); // queued behind the pause, never sent
    take('second', 1009);
    take('third', 1015);
    clock.advance(1002);
    await flush();
    expect(order).toEqual(['never-sent']);
    expect(leases['never-sent']!.probe).toBe(true);
    leases['never-sent']!.accepted();
    await flush();
    // the probe got through, but the calls whose own 429 came later wait out their own retry-after
    expect(order).toEqual(['never-sent']);
    clock.advance(7);
    await flush();
    expect(order).toEqual(['never-sent', 'second']);
    clock.advance(6);
    await flush();
    expect(order).toEqual(['never-sent', 'second', 'third']);
    expect(leases.third!.waitedMs).toBe(1015);
  });

  it('a 429 asking a longer wait, or answering a request sent after the pause began, still pushes the pause later', async () => {
    const { gate } = setup();
    const origin = (setAt: number, askedMs: number): PauseOrigin => ({ setAt, serverWait: null, askedMs, maxWaitMs: 60_000 });
    gate.pause('p:m', 1002, '429', origin(2, 1000), 0);
    // sent together, but this one asks 5 s
    expect(gate.pause('p:m', 5010, '429', origin(10, 5000), 0)).toBe(true);
    expect(gate.pausedUntil('p:m')).toBe(5010);
    // the probe, sent after the pause began, is answered with the same ask: a new pause from its answer
    expect(gate.pause('p:m', 6020, '429', origin(5020, 1000), 5011)).toBe(true);
    expect(gate.pausedUntil('p:m')).toBe(6020);
    // and a 429 arriving after the pause in force ran out begins a new one
    expect(gate.pause('p:m', 7100, '429', origin(6100, 1000), 0)).toBe(true);
  });

  it('clearing a pause clears the own waits of the calls behind it too', async () => {
    const { clock, gate, lease } = setup();
    gate.pause('p:m', 1000, '429', { setAt: 0, serverWait: '1', askedMs: 1000, maxWaitMs: 60_000 }, 0);
    let got: GateLease | null = null;
    void lease('p:m', { notBefore: 1005 }).then((l) => (got = l));
    clock.advance(10);
    await flush();
    expect(gate.clear('p:m')).toBe(true);
    await flush();
    expect(got).not.toBeNull();
    expect(got!.waitedMs).toBe(10);
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

describe('every wait at the gate is bounded', () => {
  it('a 429 asking for year 9999 pauses for on_rate_limit.max_wait at most, and says so', () => {
    const now = Date.UTC(2026, 0, 1);
    const far = Date.UTC(9999, 11, 31, 23, 59, 59);
    const p = pauseFor429({ now, askedMs: far - now, maxWaitMs: 60_000, serverWait: 'retry-after: Fri, 31 Dec 9999 23:59:59 GMT' });
    expect(p.pausedUntil).toBe(now + 60_000);
    expect(p.origin).toEqual({ setAt: now, serverWait: 'retry-after: Fri, 31 Dec 9999 23:59:59 GMT', askedMs: far - now, maxWaitMs: 60_000 });
    // a wait within the bound is served whole
    expect(pauseFor429({ now, askedMs: 2000, maxWaitMs: 60_000, serverWait: null }).pausedUntil).toBe(now + 2000);
  });

  it('a call waiting for the probe gives up when its transport budget runs out', async () => {
    const { clock, gate, lease, opts } = setup();
    gate.pause('p:m', 1000, '429');
    clock.advance(1000);
    const probe = await lease('p:m'); // in flight, and it hangs
    expect(probe.probe).toBe(true);
    let got: unknown = null;
    void gate.acquire('p:m', opts({ deadline: 5000 })).then((a) => (got = a));
    await flush();
    expect(got).toBeNull();
    clock.advance(3999);
    await flush();
    expect(got).toBeNull();
    clock.advance(1);
    await flush();
    expect(got).toEqual({ ok: false, limit: 'budget', waitingFor: 'probe', pausedUntil: null, waitedMs: 4000 });
    // the probe's own release still lets the others through
    probe.release({ rateLimited: false });
    expect((await lease('p:m')).probe).toBe(false);
  });

  it('a call queued for a slot gives up when its transport budget runs out, and leaks no slot', async () => {
    const { clock, gate, lease, opts } = setup();
    const a = await lease('p:m', { maxConcurrency: 1 });
    let got: unknown = null;
    void gate.acquire('p:m', opts({ maxConcurrency: 1, deadline: 2000 })).then((r) => (got = r));
    await flush();
    clock.advance(2000);
    await flush();
    expect(got).toMatchObject({ ok: false, limit: 'budget', waitingFor: 'slot', waitedMs: 2000 });
    a.release({ rateLimited: false });
    // the slot is free again: the next call takes it at once
    const b = await lease('p:m', { maxConcurrency: 1 });
    expect(b.waitedMs).toBe(0);
    expect(gate.snapshot(clock.now())).toMatchObject([{ model: 'p:m', inFlight: 1, waiting: 0 }]);
    expect(clock.pending()).toBe(0); // no deadline timer left behind
  });

  it('a call that gets its slot or probe in time leaves no deadline timer behind', async () => {
    const { clock, lease } = setup();
    const a = await lease('p:m', { maxConcurrency: 1, deadline: 10_000 });
    const b = lease('p:m', { maxConcurrency: 1, deadline: 10_000 });
    await flush();
    expect(clock.pending()).toBe(1);
    a.release({ rateLimited: false });
    await b;
    expect(clock.pending()).toBe(0);
  });
});

describe('clearing a pause', () => {
  it('forgets it: the calls waiting it out go on at once, one first as the probe', async () => {
    const { clock, gate, lease } = setup();
    const origin: PauseOrigin = { setAt: 0, serverWait: 'retry-after: 30', askedMs: 30_000, maxWaitMs: 60_000 };
    gate.pause('p:m', 30_000, 'HTTP 429 from p:m', origin);
    expect(gate.snapshot(0)).toMatchObject([{ model: 'p:m', pausedUntil: 30_000, origin }]);
    const got: GateLease[] = [];
    for (let i = 0; i < 2; i++) void lease('p:m').then((l) => got.push(l));
    await flush();
    expect(got).toHaveLength(0);
    clock.advance(1000);
    expect(gate.clear('p:m')).toBe(true);
    await flush();
    expect(got).toHaveLength(1);
    expect(got[0]!.probe).toBe(true);
    expect(got[0]!.waitedMs).toBe(1000);
    got[0]!.release({ rateLimited: false });
    await flush();
    expect(got).toHaveLength(2);
    expect(gate.pausedUntil('p:m')).toBeNull();
    expect(clock.pending()).toBe(0);
    // nothing to forget the second time, nor for a model never paused
    expect(gate.clear('p:m')).toBe(false);
    expect(gate.clear('p:other')).toBe(false);
  });

  it('a reset forgets every model, as a new process knows none: no pause, and the next call goes straight through, not as a probe', async () => {
    const { gate, lease } = setup();
    gate.pause('p:m', 30_000, 'HTTP 429 from p:m');
    gate.pause('p:other', 60_000, 'HTTP 429 from p:other');
    gate.reset();
    expect(gate.snapshot(0)).toEqual([]);
    expect(gate.pausedUntil('p:m')).toBeNull();
    const l = await lease('p:m');
    expect([l.waitedMs, l.probe]).toEqual([0, false]);
  });
});

/**
 * A cluster store in memory, with the claim rules of db/cluster-gate.ts (a row per model: the
 * pause, the probe's owner and when its claim lapses): each `process(name)` is the SharedPauses of
 * one process, and every process sees a change at once (the notices of PostgreSQL take ~1 ms).
 */
function fakeCluster(ttl = 10_000) {
  const rows = new Map<string, { until: number; owner: string | null; probeUntil: number | null }>();
  const watchers = new Map<string, Set<() => void>>();
  const log: string[] = [];
  const changed = (m: string) => [...(watchers.get(m) ?? [])].forEach((f) => f());
  let loaded: Promise<void> = Promise.resolve();
  /** runs as a claim reaches the store */
  const hooks: { onClaim?: () => void } = {};
  const process = (name: string): SharedPauses & { cluster: ClusterPauses } => ({
    get: (m) => rows.get(m)?.until ?? null,
    set: (m, until) => {
      const r = rows.get(m);
      if (r && until <= r.until) return;
      rows.set(m, { until, owner: null, probeUntil: null }); // a new pause frees the claim
      changed(m);
    },
    cluster: {
      ready: () => loaded,
      claimProbe: async (m, now) => {
        hooks.onClaim?.();
        const r = rows.get(m);
        if (!r) return { kind: 'none' };
        if (r.until > now) return { kind: 'taken', retryAt: r.until };
        if (r.owner !== null && r.probeUntil! >= now) return { kind: 'taken', retryAt: r.probeUntil! + 1 };
        Object.assign(r, { owner: name, probeUntil: now + ttl });
        log.push(`${name} claims`);
        return { kind: 'won' };
      },
      probeDone: (m, outcome: ProbeOutcome) => {
        log.push(`${name} ${outcome}`);
        const r = rows.get(m);
        if (!r || r.owner !== name) return;
        if (outcome === 'ok') rows.delete(m);
        else Object.assign(r, { owner: null, probeUntil: null });
        changed(m);
      },
      watch: (m, f) => {
        if (!watchers.has(m)) watchers.set(m, new Set());
        watchers.get(m)!.add(f);
        return () => void watchers.get(m)!.delete(f);
      },
    },
  });
  return {
    rows,
    log,
    hooks,
    process,
    /** an editor cleared the pause on /providers: the row is gone, and every process hears it */
    clear: (m: string) => {
      rows.delete(m);
      changed(m);
    },
    /** the first read of the stored pauses is still on its way */
    loading: () => {
      let done!: () => void;
      loaded = new Promise((r) => (done = r));
      return done;
    },
  };
}

describe('one gate across the cluster (SharedPauses.cluster)', () => {
  /** two processes, each with its own gate, over one cluster store and one clock */
  function twoProcesses() {
    const clock = createManualClock(0);
    const store = fakeCluster();
    const procs = (['A', 'B'] as const).map((name) => {
      const gate = createRateGate();
      const shared = store.process(name);
      const leases: { name: string; lease: GateLease }[] = [];
      const refused: unknown[] = [];
      const call = (n: string, over: Partial<AcquireOptions> = {}) =>
        gate
          .acquire('p:m', { clock, maxConcurrency: 16, maxWaitMs: 60_000, deadline: Number.MAX_SAFE_INTEGER, shared, ...over })
          .then((a) => (a.ok ? leases.push({ name: `${name}${n}`, lease: a.lease }) : refused.push(a)));
      /** a 429 seen here: the model paused in this gate and in the store, as the transport does */
      const rateLimited = (until: number) => {
        if (gate.pause('p:m', until, 'HTTP 429 from p:m')) shared.set('p:m', until, 'HTTP 429 from p:m');
      };
      return { gate, shared, leases, refused, call, rateLimited };
    });
    const [a, b] = procs as [(typeof procs)[0], (typeof procs)[0]];
    const sent = () => [...a.leases, ...b.leases].map((l) => (l.lease.probe ? `${l.name}(probe)` : l.name));
    return { clock, store, a, b, sent };
  }

  it('a 429 in one process pauses the model in the other; when it ends one probe goes out in the whole cluster', async () => {
    const { clock, store, a, b, sent } = twoProcesses();
    a.rateLimited(1000);
    for (const n of ['1', '2']) void a.call(n);
    for (const n of ['1', '2']) void b.call(n);
    await flush();
    expect(sent()).toEqual([]); // B never saw the 429: it is paused by the stored pause
    expect(b.gate.pausedUntil('p:m')).toBe(1000);
    clock.advance(1000);
    await flush();
    expect(sent()).toEqual(['A1(probe)']);
    expect(store.log).toEqual(['A claims']);
    // B lost the claim: its calls wait for the probe's answer
    clock.advance(5000);
    await flush();
    expect(sent()).toEqual(['A1(probe)']);
    a.leases[0]!.lease.release({ rateLimited: false });
    await flush();
    expect(sent().sort()).toEqual(['A1(probe)', 'A2', 'B1', 'B2']);
    expect(store.rows.has('p:m')).toBe(false); // the probe came back: the pause is over for everyone
    expect(store.log).toEqual(['A claims', 'A ok']);
    expect(clock.pending()).toBe(0);
  });

  it('a probe that gets another 429 keeps every process paused until the new wait is over, then one probes again', async () => {
    const { clock, store, a, b, sent } = twoProcesses();
    b.rateLimited(1000);
    void a.call('1');
    void b.call('1');
    void b.call('2');
    clock.advance(1000);
    await flush();
    expect(sent()).toEqual(['A1(probe)']);
    // the probe's 429 sets a new pause (which frees the claim), then its lease is released
    a.rateLimited(4000);
    a.leases[0]!.lease.release({ rateLimited: true });
    await flush();
    expect(store.rows.get('p:m')).toMatchObject({ until: 4000, owner: null });
    clock.advance(2999);
    await flush();
    expect(sent()).toEqual(['A1(probe)']);
    clock.advance(1);
    await flush();
    expect(sent()).toEqual(['A1(probe)', 'B1(probe)']);
    b.leases[0]!.lease.release({ rateLimited: false });
    await flush();
    expect(sent()).toEqual(['A1(probe)', 'B1(probe)', 'B2']);
    expect(store.log).toEqual(['A claims', 'A rate_limited', 'B claims', 'B ok']);
  });

  it('a call sleeping out a pause learns of a longer one from another process, and waits that out too', async () => {
    const { clock, a, b, sent } = twoProcesses();
    a.rateLimited(1000);
    void b.call('1');
    await flush();
    clock.advance(500);
    a.rateLimited(3000); // A got another 429 meanwhile
    clock.advance(500);
    await flush();
    expect(sent()).toEqual([]);
    clock.advance(2000);
    await flush();
    expect(sent()).toEqual(['B1(probe)']);
    expect(b.leases[0]!.lease.waitedMs).toBe(3000);
  });

  it('without cluster hooks (SQLite), a call re-reads the stored pause when it wakes and sleeps out a longer one', async () => {
    const { clock, gate, lease } = setup();
    const store = new Map<string, number>([['p:m', 1000]]);
    const shared: SharedPauses = { get: (m) => store.get(m) ?? null, set: (m, u) => void store.set(m, u) };
    let got: GateLease | null = null;
    void lease('p:m', { shared }).then((l) => (got = l));
    await flush();
    store.set('p:m', 2500); // another process's longer pause, written while this call sleeps
    clock.advance(1000);
    await flush();
    expect(got).toBeNull();
    clock.advance(1500);
    await flush();
    expect(got!.waitedMs).toBe(2500);
    expect(gate.pausedUntil('p:m')).toBe(2500);
  });

  it('a prober that died holds the others back only until its claim lapses', async () => {
    const { clock, a, b, sent } = twoProcesses();
    a.rateLimited(1000);
    void a.call('1');
    clock.advance(1000);
    await flush();
    expect(sent()).toEqual(['A1(probe)']); // …and process A dies with it in flight: no release, no renewal
    void b.call('1');
    await flush();
    clock.advance(9999); // the claim is good until 1000 + 10 s
    await flush();
    expect(sent()).toEqual(['A1(probe)']);
    clock.advance(2);
    await flush();
    expect(sent()).toEqual(['A1(probe)', 'B1(probe)']);
  });

  it("a call waiting for another process's probe gives up when its transport budget runs out", async () => {
    const { clock, a, b, sent } = twoProcesses();
    a.rateLimited(1000);
    void a.call('1');
    clock.advance(1000);
    await flush();
    void b.call('1', { deadline: 4000 });
    void b.call('2', { deadline: 6000 });
    await flush();
    clock.advance(3000);
    await flush();
    expect(b.refused).toEqual([{ ok: false, limit: 'budget', waitingFor: 'probe', pausedUntil: null, waitedMs: 3000 }]);
    clock.advance(1000);
    await flush();
    a.leases[0]!.lease.release({ rateLimited: false });
    await flush();
    expect(sent()).toEqual(['A1(probe)', 'B2']);
    expect(clock.pending()).toBe(0);
  });

  it('a pause cleared on /providers lets the waiters of every process go on at once, none as a probe', async () => {
    const { clock, store, a, b, sent } = twoProcesses();
    a.rateLimited(30_000);
    void a.call('1');
    void b.call('1');
    void b.call('2');
    await flush();
    clock.advance(1000);
    store.clear('p:m');
    await flush();
    expect(sent().sort()).toEqual(['A1', 'B1', 'B2']);
    expect(a.gate.pausedUntil('p:m')).toBeNull();
    expect(b.leases[0]!.lease.waitedMs).toBe(1000);
    expect(clock.pending()).toBe(0);
  });

  it('a process that starts mid-pause reads the stored pauses before its first call goes', async () => {
    const { clock, store, b, sent } = twoProcesses();
    const loaded = store.loading();
    store.process('A').set('p:m', 1000, '429');
    void b.call('1');
    await flush();
    loaded();
    await flush();
    expect(sent()).toEqual([]);
    clock.advance(1000);
    await flush();
    expect(sent()).toEqual(['B1(probe)']);
  });

  it('a call stopped while it claims the probe hands the claim back', async () => {
    const { clock, store, a, b, sent } = twoProcesses();
    a.rateLimited(1000);
    clock.advance(1000);
    const ac = new AbortController();
    store.hooks.onClaim = () => ac.abort(new Error('stop')); // while the claim is on its way
    await expect(a.call('1', { signal: ac.signal })).rejects.toThrow('stop');
    store.hooks.onClaim = undefined;
    expect(store.log).toEqual(['A claims', 'A not_sent']);
    await b.call('1');
    expect(sent()).toEqual(['B1(probe)']);
    expect(a.gate.snapshot(clock.now())).toEqual([]);
  });
});

describe('the gate over the simulator', () => {
  let h: Awaited<ReturnType<typeof harness>>;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(() => h.close());

  it.each(DIALECTS)('$dialect: a 429 with retry-after in year 9999 gives up at once, persists a pause of at most max_wait, and a call after max_wait is not refused', async (c) => {
    h.fresh();
    const far = 'Fri, 31 Dec 9999 23:59:59 GMT';
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': far } },
        { kind: 'ok', text: 'back' },
      ],
    });
    const clock = createVirtualClock(Date.UTC(2026, 0, 1));
    const gate = createRateGate();
    const rows = new Map<string, { until: number; reason: string; origin?: PauseOrigin }>();
    const shared: SharedPauses = { get: (m) => rows.get(m)?.until ?? null, set: (m, until, reason, origin) => void rows.set(m, { until, reason, origin }) };
    const providerOverrides = { onRateLimit: { maxWaitMs: 60_000 } };
    const call = (nodeId: string) => h.run(node([c.model], { nodeId, policy: { retries: 0 } }), { clock, gate, sharedPauses: shared, providerOverrides });

    const t0 = clock.now();
    const first = await call('first');
    // gave up at once: one request, no sleep
    expect(first.status).toBe('failed');
    expect(first.attempts[0]!.error!.message).toMatch(/longer than on_rate_limit\.max_wait \(60 s\): not retried/);
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
    // the pause persisted ends at most max_wait from now, with its origin
    const row = rows.get(c.model)!;
    expect(row.until).toBeLessThanOrEqual(t0 + 60_000);
    expect(row.until).toBe(t0 + 60_000);
    expect(row.origin).toEqual({ setAt: t0, serverWait: `retry-after: ${far}`, askedMs: Date.UTC(9999, 11, 31, 23, 59, 59) - t0, maxWaitMs: 60_000 });
    expect(gate.pausedUntil(c.model)).toBe(t0 + 60_000);
    const event = h.events.find((e) => e.type === 'rate_limit_pause');
    expect(event).toMatchObject({ model: c.model, pausedUntil: t0 + 60_000, origin: row.origin });

    // a call during the pause waits it out — max_wait at most — and goes first, as the probe
    const during = await call('during');
    expect(during.status).toBe('succeeded');
    expect(during.attempts[0]!.tries.map((t) => [t.status, t.waitedMs])).toEqual([[200, 60_000]]);
    expect(clock.sleeps).toEqual([60_000]);

    // once max_wait has passed, a later call is neither refused nor kept waiting
    expect(clock.now()).toBe(t0 + 60_000);
    const later = await call('later');
    expect(later.status).toBe('succeeded');
    expect(later.output).toBe('back');
    expect(later.attempts[0]!.tries.map((t) => [t.status, t.waitedMs])).toEqual([[200, 0]]);

    // and another process over the same store, with its own gate, is not refused either
    const other = await h.run(node([c.model], { nodeId: 'elsewhere', policy: { retries: 0 } }), { clock, gate: createRateGate(), sharedPauses: shared, providerOverrides });
    expect(other.status).toBe('succeeded');
  });

  it('429s to calls sent together pause the model from the first; the probe then goes, and a call whose 429 came later retries only after its own retry-after', async () => {
    h.fresh();
    const c = DIALECTS[0]!;
    h.script({
      [c.modelId]: [
        // both in flight at once: a's 429 comes back first, b's later
        { kind: 'status', status: 429, headers: { 'retry-after': '1' }, latency: { first_token_ms: 100 } },
        { kind: 'status', status: 429, headers: { 'retry-after': '1' }, latency: { first_token_ms: 400 } },
        { kind: 'ok', text: 'a' },
        { kind: 'ok', text: 'b' },
      ],
    });
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const t0 = clock.now();
    const gate = createRateGate();
    const call = (nodeId: string) => h.run(node([c.model], { nodeId, policy: { retries: 0 } }), { clock, gate });
    const a = call('a');
    await until(() => h.requests(c.modelId).length === 1);
    const b = call('b');
    await until(() => h.requests(c.modelId).length === 2);
    await until(() => gate.pausedUntil(c.model) === t0 + 1000); // a's 429, at t0
    clock.advance(10); // b's 429 comes back 10 ms later
    await until(() => clock.pending() === 2); // both wait: a for the pause, b for its own retry-after
    expect(gate.pausedUntil(c.model)).toBe(t0 + 1000);
    clock.advance(990);
    await until(() => h.requests(c.modelId).length === 3);
    expect((await a).output).toBe('a');
    expect(h.requests(c.modelId)).toHaveLength(3); // b waits its own second still
    clock.advance(10);
    const rb = await b;
    expect(rb.output).toBe('b');
    expect(rb.attempts[0]!.tries.map((t) => [t.status, t.waitedMs])).toEqual([
      [429, 0],
      [200, 1000],
    ]);
  });

  it('a call queued for a slot behind a slow one gives up when its transport budget runs out, and says why', async () => {
    h.fresh();
    const c = DIALECTS[0]!;
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'slow', latency: { first_token_ms: 400 } }] });
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const gate = createRateGate();
    const providerOverrides = { maxConcurrency: 1, transport: { budgetMs: 5000 } };
    const call = (nodeId: string) => h.run(node([c.model], { nodeId, policy: { retries: 0 } }), { clock, gate, providerOverrides });
    const slow = call('slow');
    await until(() => h.requests(c.modelId).length === 1);
    const queued = call('queued');
    await until(() => clock.pending() === 1); // the queued call's deadline
    clock.advance(5000);
    const res = await queued;
    expect(res.status).toBe('failed');
    expect(res.attempts[0]!.error!.message).toContain(`${c.model} waited 5 s for a free slot (max_concurrency: 1), and transport.budget (5 s) ran out: not sent`);
    expect(res.attempts[0]!.tries).toMatchObject([{ status: null, error: 'timeout', retryAfterMs: null, waitedMs: 5000 }]);
    expect((await slow).status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(1);
  });
});
