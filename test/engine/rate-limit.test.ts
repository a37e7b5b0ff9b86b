// The rate-limit gate across nodes (DESIGN: Transport retry and rate limits; seed: "A rate limit
// (429) also pauses every other call of the same model until the wait is over"). A manual clock
// holds time still while we look at the simulator's request log.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callNode } from '@/lib/engine/call-node';
import { createRateGate, type RateGate } from '@/lib/engine/rate-gate';
import type { EngineEvent, SharedPauses } from '@/lib/engine/types';
import { createManualClock, type ManualClock } from '@/lib/engine/virtual-clock';
import { builtinAdapters } from '@/lib/providers';
import { DIALECTS, harness, node, other, simProviders, until } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

describe.each(DIALECTS)('rate-limit gate over $dialect', (c) => {
  let clock: ManualClock;
  let gate: RateGate;
  let events: EngineEvent[];
  const run = (model: string, nodeId: string, shared?: SharedPauses) =>
    callNode(node([model], { nodeId }), {
      providers: simProviders(h.sim),
      adapters: builtinAdapters,
      clock,
      gate,
      env: {},
      sharedPauses: shared,
      onEvent: (e) => void events.push(e),
    });

  beforeEach(() => {
    clock = createManualClock(Date.UTC(2026, 0, 1));
    gate = createRateGate();
    events = [];
  });

  it('a 429 on one node pauses a concurrent node of the same model, not a node of another model', async () => {
    const b = other(c);
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
        { kind: 'ok', text: 'A' },
      ],
      [b.modelId]: [{ kind: 'ok', text: 'B' }],
    });

    const first = run(c.model, 'first');
    await until(() => events.some((e) => e.type === 'rate_limit_pause'));
    const pausedAt = clock.now();
    const second = run(c.model, 'second'); // same model, started during the pause
    const third = run(b.model, 'third'); // another model

    // the other model is not paused: it completes while time stands still
    const thirdRes = await third;
    expect(thirdRes.status).toBe('succeeded');
    // the same model sent nothing during the pause: still only the 429 in the log
    await until(() => clock.pending() >= 2); // both same-model calls are waiting at the gate
    expect(h.requests(c.modelId)).toHaveLength(1);

    clock.advance(2000);
    const [firstRes, secondRes] = await Promise.all([first, second]);
    expect(firstRes.status).toBe('succeeded');
    expect(secondRes.status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(3);
    // the second node's only try waited out the pause at the gate
    const t = secondRes.attempts[0]!.tries[0]!;
    expect(t.startedAt).toBeGreaterThanOrEqual(pausedAt + 2000);
    expect(t.waitedMs).toBe(2000);
  });

  it('after the pause one call probes; another 429 keeps the rest waiting', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
        { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
        { kind: 'ok', text: 'ok' },
      ],
    });
    const first = run(c.model, 'first');
    await until(() => events.filter((e) => e.type === 'rate_limit_pause').length === 1);
    const second = run(c.model, 'second');
    await until(() => clock.pending() >= 2);
    clock.advance(1000); // one probe goes and gets the second 429
    await until(() => events.filter((e) => e.type === 'rate_limit_pause').length === 2);
    await until(() => clock.pending() >= 2);
    expect(h.requests(c.modelId)).toHaveLength(2);
    clock.advance(1000);
    const results = await Promise.all([first, second]);
    expect(results.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(h.requests(c.modelId)).toHaveLength(4);
  });

  it('the calls waiting behind a streamed probe go as soon as its headers are in, not when its stream ends', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
        // the probe streams for about 2 s (real time)
        { kind: 'ok', text: 'slow '.repeat(40), latency: { first_token_ms: 0, tokens_per_s: 20 } },
        { kind: 'ok', text: 'quick' },
      ],
    });
    const streamed = (nodeId: string) =>
      callNode(node([c.model], { nodeId, stream: true }), { providers: simProviders(h.sim), adapters: builtinAdapters, clock, gate, env: {}, onEvent: (e) => void events.push(e) });
    const first = streamed('first');
    let probeEnded = false;
    void first.then(() => (probeEnded = true));
    await until(() => events.some((e) => e.type === 'rate_limit_pause'));
    const second = streamed('second');
    await until(() => clock.pending() >= 2);
    clock.advance(1000);
    await until(() => h.requests(c.modelId).length === 3);
    // the follower went while the probe's node was still reading its ~2 s stream (waiting for the
    // stream's end, it would arrive about 2 s after the probe)
    expect(probeEnded).toBe(false);
    const [, probe, follower] = h.requests(c.modelId);
    expect(follower!.arrivedAt - probe!.arrivedAt).toBeLessThan(1500);
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
    expect(h.requests(c.modelId)).toHaveLength(3);
  });

  it('writes the pause to the shared store, and honours one another process wrote', async () => {
    const rows = new Map<string, { until: number; reason: string }>();
    const shared: SharedPauses = { get: (m) => rows.get(m)?.until ?? null, set: (m, u, reason) => void rows.set(m, { until: u, reason }) };
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, { kind: 'ok' }] });
    const first = run(c.model, 'first', shared);
    await until(() => rows.has(c.model));
    expect(rows.get(c.model)!.until).toBe(clock.now() + 2000);
    clock.advance(2000);
    await first;

    // another process paused a model this process never saw fail
    const b = other(c);
    rows.set(b.model, { until: clock.now() + 5000, reason: 'elsewhere' });
    h.script({ [b.modelId]: [{ kind: 'ok' }] });
    const p = run(b.model, 'x', shared);
    await until(() => clock.pending() >= 1);
    expect(h.requests(b.modelId)).toHaveLength(0);
    clock.advance(5000);
    expect((await p).attempts[0]!.tries[0]!.waitedMs).toBe(5000);
  });
});

describe('max_concurrency', () => {
  it('limits the requests of one model in flight at once', async () => {
    const c = DIALECTS[0]!;
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'x', latency: { first_token_ms: 30 } }] });
    const gate = createRateGate();
    const providers = simProviders(h.sim, { maxConcurrency: 2 });
    const clock = createManualClock();
    const runs = Array.from({ length: 5 }, (_, i) => callNode(node([c.model], { nodeId: `n${i}` }), { providers, adapters: builtinAdapters, clock, gate, env: {} }));
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, gate.snapshot(clock.now()).find((s) => s.model === c.model)?.inFlight ?? 0)), 1);
    await Promise.all(runs);
    clearInterval(timer);
    expect(peak).toBe(2);
    expect(h.requests(c.modelId)).toHaveLength(5);
  });
});

describe('abort', () => {
  it('a node aborted while it waits out a pause rejects with the reason and sends nothing more', async () => {
    const c = DIALECTS[0]!;
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '5' } }, { kind: 'ok' }] });
    const clock = createManualClock();
    const ac = new AbortController();
    const p = callNode(node([c.model]), { providers: simProviders(h.sim), adapters: builtinAdapters, clock, gate: createRateGate(), env: {}, signal: ac.signal });
    await until(() => clock.pending() === 1);
    ac.abort(new Error('run cancelled'));
    await expect(p).rejects.toThrow('run cancelled');
    expect(h.requests(c.modelId)).toHaveLength(1);
  });
});

describe('a call the rate-limit gate refuses without sending is no answer (DESIGN: Outcome policies, repair and budgets)', () => {
  const c = DIALECTS[0]!;
  const b = other(c);
  // another process paused the model for 2 minutes; this provider waits at most 1 minute
  const pausedElsewhere = (now: number): SharedPauses => {
    const rows = new Map([[c.model, now + 120_000]]);
    return { get: (m) => rows.get(m) ?? null, set: (m, until) => void rows.set(m, until) };
  };
  const providerOverrides = { onRateLimit: { maxWaitMs: 60_000 } };

  it('under on_error retry it is recorded once, spends no answer, and the node fails at once with a hint naming max_wait and fallback_models', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok' }] });
    const res = await h.run(node([c.model], { policy: { retries: 2 } }), { sharedPauses: pausedElsewhere(h.clock.now()), providerOverrides });
    expect(h.requests(c.modelId)).toHaveLength(0);
    // one attempt, not three answers for one request
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', cause: 'provider_error', action: 'none', error: { kind: 'not_sent' } });
    expect(res.attempts[0]!.error!.message).toBe(`${c.model} is paused by a rate limit for 120 s more, longer than on_rate_limit.max_wait (60 s): not sent`);
    expect(res.attempts[0]!.tries).toMatchObject([{ tryNo: 1, status: null, error: 'rate_limited', retryAfterMs: 120_000 }]);
    expect(res.budget.models).toEqual([{ model: c.model, answers: 0, limit: 3 }]);
    expect(res.error).toMatchObject({
      code: 'provider_error',
      hint: `Raise on_rate_limit.max_wait (now 60 s) in providers/${c.provider}.yaml, or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml — see: aqven explain provider_error`,
    });
    expect(res.error!.message).toContain('a model still paused is not asked again');
  });

  it('under on_error fallback it moves to the next model, which has its whole budget', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok' }], [b.modelId]: [{ kind: 'ok', text: 'from b' }] });
    const res = await h.run(node([c.model, b.model], { policy: { onError: 'fallback' } }), { sharedPauses: pausedElsewhere(h.clock.now()), providerOverrides });
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('from b');
    expect(res.attempts.map((a) => [a.model, a.error?.kind ?? null, a.action])).toEqual([
      [c.model, 'not_sent', 'fallback'],
      [b.model, null, 'none'],
    ]);
    expect(res.budget.models.map((m) => m.answers)).toEqual([0, 1]);
  });

  it('a pause it outlasts by the transport.budget names transport.budget', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok' }] });
    const res = await h.run(node([c.model]), {
      sharedPauses: pausedElsewhere(h.clock.now()),
      providerOverrides: { onRateLimit: { maxWaitMs: 3_600_000 }, transport: { budgetMs: 30_000 } },
    });
    expect(res.attempts).toHaveLength(1);
    expect(res.error!.hint).toMatch(/^Raise transport\.budget \(now 30 s\) in providers\//);
  });
});
