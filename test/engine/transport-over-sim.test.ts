// Transport retry over the real simulator (DESIGN: Transport retry and rate limits), for every wire
// protocol: the unit rules are in lib/engine/retry-rules.test.ts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC, DIALECTS, GEMINI, harness, node, OPENAI, OPENROUTER } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

describe.each(DIALECTS)('transport over $dialect', (c) => {
  it('429 with retry-after: 2 twice, then success: three requests, each retry at least 2 s after its 429', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
        { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
        { kind: 'ok', text: 'done' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('done');
    expect(h.requests(c.modelId)).toHaveLength(3);
    expect(res.attempts).toHaveLength(1);
    const tries = res.attempts[0]!.tries;
    expect(tries.map((t) => [t.status, t.error, t.retryAfterMs])).toEqual([
      [429, 'rate_limited', 2000],
      [429, 'rate_limited', 2000],
      [200, null, null],
    ]);
    for (const i of [1, 2]) {
      expect(tries[i]!.startedAt - tries[i - 1]!.finishedAt).toBeGreaterThanOrEqual(2000);
      expect(tries[i]!.waitedMs).toBeGreaterThanOrEqual(2000);
    }
    // every try was reported as it ended, and the pause was announced
    expect(h.events.filter((e) => e.type === 'try_end')).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'rate_limit_pause')).toHaveLength(2);
  });

  it('a 400 is sent once: client_error, not resent by on_error: retry', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 400 }, { kind: 'ok' }] });
    const res = await h.run(node([c.model]));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.status).toBe('failed');
    expect(res.error?.code).toBe('provider_error');
    expect(res.attempts[0]!.error?.kind).toBe('client_error');
    expect(res.attempts[0]!.error?.message).toMatch(/HTTP 400: .*a client error: not retried/);
    expect(res.attempts[0]!.tries).toHaveLength(1);
  });

  it('a 503 is retried within the attempt', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 503 },
        { kind: 'ok', text: 'fine' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(2);
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]!.tries.map((t) => [t.status, t.error])).toEqual([
      [503, 'server_error'],
      [200, null],
    ]);
  });

  it.each(['before', 'during_body'] as const)('a dropped connection (%s) is retried', async (when) => {
    h.script({
      [c.modelId]: [
        { kind: 'drop', when },
        { kind: 'ok', text: 'back' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('back');
    expect(h.requests(c.modelId)).toHaveLength(2);
    expect(res.attempts[0]!.tries[0]!.error).toBe('connection');
  });

  it('x-should-retry: false is respected: a 503 that says so is sent once', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 503, headers: { 'x-should-retry': 'false' } }, { kind: 'ok' }] });
    const res = await h.run(node([c.model]));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.status).toBe('failed');
    expect(res.attempts[0]!.error?.message).toMatch(/the server said not to retry/);
  });

  it('x-should-retry: true makes a 400 worth another try', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 400, headers: { 'x-should-retry': 'true' } },
        { kind: 'ok', text: 'ok' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(2);
  });

  it('a retry-after longer than max_wait ends the tries at once, naming the limit', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '120' } }, { kind: 'ok' }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(h.clock.sleeps).toEqual([]); // did not sleep into certain failure
    const a = res.attempts[0]!;
    expect(a.outcome).toBe('error');
    expect(a.error?.kind).toBe('transport');
    expect(a.error?.message).toContain('on_rate_limit.max_wait (60 s)');
    expect(res.error?.code).toBe('provider_error');
  });

  it('a wait longer than the budget left ends the tries at once, naming transport.budget', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 503, headers: { 'retry-after': '30' } }, { kind: 'ok' }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }), { providerOverrides: { transport: { budgetMs: 10_000 } } });
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]!.error?.message).toMatch(/transport\.budget \(10 s\)/);
  });

  it('without retry-after, a 5xx backs off from transport.backoff (0.5 s, doubling, up to 25% off), not on_rate_limit; max_attempts ends the tries', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 500 }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }));
    expect(h.requests(c.modelId)).toHaveLength(3);
    expect(h.clock.sleeps).toEqual([438, 875]); // random() = 0.5: 12.5% off 500 and 1000
    expect(res.attempts[0]!.error).toMatchObject({ kind: 'transport' });
    expect(res.attempts[0]!.error?.message).toContain('transport.max_attempts: 3');
  });

  it("a provider's transport.backoff sets the waits after 5xx, dropped connections and timeouts, up to its cap", async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 503 }, { kind: 'drop' }, { kind: 'status', status: 502 }, { kind: 'ok', text: 'through' }] });
    const backoff = { baseMs: 200, factor: 3, capMs: 1000, jitter: 0 };
    const res = await h.run(node([c.model]), { providerOverrides: { transport: { maxAttempts: 4, backoff }, onRateLimit: { defaultWaitMs: 5000 } } });
    expect(res.output).toBe('through');
    expect(h.clock.sleeps).toEqual([200, 600, 1000]);
  });

  it('a wait the server gave is waited exactly: no jitter, no backoff on top', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 503, headers: { 'retry-after': '1.5' } },
        { kind: 'ok', text: 'on time' },
      ],
    });
    const res = await h.run(node([c.model]), { providerOverrides: { transport: { backoff: { baseMs: 4000, factor: 2, capMs: 8000, jitter: 1 } } } });
    expect(res.output).toBe('on time');
    expect(h.clock.sleeps).toEqual([1500]);
    const [first, second] = res.attempts[0]!.tries;
    expect(second!.startedAt - first!.finishedAt).toBe(1500);
  });

  it('a 429 without a wait still backs off from on_rate_limit.default_wait, at the gate', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429 },
        { kind: 'ok', text: 'after the pause' },
      ],
    });
    const res = await h.run(node([c.model]), { providerOverrides: { transport: { backoff: { baseMs: 100, factor: 2, capMs: 100, jitter: 0 } } } });
    expect(res.output).toBe('after the pause');
    const [first, second] = res.attempts[0]!.tries;
    expect(second!.startedAt - first!.finishedAt).toBe(1000); // default_wait 1 s, random() = 0.5: no jitter
  });

  it('on_rate_limit.max_attempts bounds the tries when the failures are 429s', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }), { providerOverrides: { onRateLimit: { maxAttempts: 4 } } });
    expect(h.requests(c.modelId)).toHaveLength(4);
    expect(res.attempts[0]!.error?.message).toContain('on_rate_limit.max_attempts: 4');
  });

  it('a transport-exhausted attempt is outcome error and follows on_error (retry)', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 503 },
        { kind: 'status', status: 503 },
        { kind: 'ok', text: 'x' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.outcome, a.error?.kind ?? null, a.cause, a.action])).toEqual([
      ['error', 'transport', 'provider_error', 'retry'],
      ['ok', null, null, 'none'],
    ]);
    expect(h.events.filter((e) => e.type === 'attempt_end')).toHaveLength(2);
  });

  it('a stalled response times out (transport.timeout) and is retried', async () => {
    h.script({ [c.modelId]: [{ kind: 'stall' }, { kind: 'ok', text: 'late' }] });
    const res = await h.run(node([c.model]), { providerOverrides: { transport: { timeoutMs: 100 } } });
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]!.tries.map((t) => t.error)).toEqual(['timeout', null]);
  });
});

describe('quota 429s are never retried', () => {
  it.each([
    [OPENAI, 'insufficient_quota'],
    [OPENROUTER, 'insufficient_quota (upstream body)'],
    [ANTHROPIC, 'enforced_spend_limit_reached'],
    [GEMINI, 'QuotaFailure without RetryInfo'],
  ])('%s: %s', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, variant: 'quota' }, { kind: 'ok' }] });
    const res = await h.run(node([c.model]));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]!.error?.kind).toBe('quota');
    expect(res.attempts[0]!.cause).toBe('quota');
    expect(res.status).toBe('failed');
  });
});

describe('server-given waits', () => {
  it('Gemini RetryInfo.retryDelay in the error body is honoured', async () => {
    h.script({
      [GEMINI.modelId]: [
        { kind: 'status', status: 429, variant: 'retry_info', retryDelay: '3.5s' },
        { kind: 'ok', text: 'y' },
      ],
    });
    const res = await h.run(node([GEMINI.model]));
    expect(res.status).toBe('succeeded');
    const [t1, t2] = res.attempts[0]!.tries;
    expect(t1!.retryAfterMs).toBe(3500);
    expect(t2!.startedAt - t1!.finishedAt).toBeGreaterThanOrEqual(3500);
  });

  it('retry-after-ms wins over retry-after', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 503, headers: { 'retry-after-ms': '250', 'retry-after': '9' } }, { kind: 'ok' }] });
    const res = await h.run(node([OPENAI.model]));
    expect(res.attempts[0]!.tries[0]!.retryAfterMs).toBe(250);
    expect(h.clock.sleeps).toEqual([250]);
  });

  it('an HTTP-date retry-after in the past means retry now', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 503, headers: { 'retry-after': 'Fri, 31 Dec 1999 23:59:59 GMT' } }, { kind: 'ok' }] });
    const res = await h.run(node([OPENAI.model]));
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]!.tries[0]!.retryAfterMs).toBe(0);
  });
});

describe('API keys', () => {
  it('are read from the env at call time, sent, and never stored, even when echoed back', async () => {
    const key = 'sk-test-SECRET-0123456789';
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${key}` } } }] });
    const res = await h.run(node([OPENAI.model]), { env: { OPENAI_API_KEY: key } });
    expect(res.status).toBe('failed');
    const stored = JSON.stringify([res, h.events]);
    expect(stored).not.toContain(key);
    expect(stored).toContain('<API_KEY>');
  });
});
