// Misread answers (issue 28), over the real simulator: what came back decides what an attempt is —
// an error object inside a 200, a refusal sent as an HTTP error, a finish value meaning the server
// gave up, a spent quota, a retry-after beyond max_wait — and the words say what came back.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptStep } from '@/lib/sim/types';
import { ANTHROPIC, DIALECTS, GEMINI, harness, node, OPENAI, OPENROUTER, other } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

describe('the words say what came back', () => {
  it.each(DIALECTS)('$dialect: a 429 on every try reads "answered 429 after 3 tries", not "could not be reached"', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }), { providerOverrides: { onRateLimit: { maxAttempts: 3 } } });
    const message = res.attempts[0]!.error!.message;
    expect(message).toMatch(new RegExp(`^${c.model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} answered 429 after 3 tries: HTTP 429`));
    expect(message).not.toContain('could not be reached');
  });

  it('a 500 on every try reads "answered 500 after 3 tries"; a connection refused still "could not be reached"', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 500 }] });
    const res = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }));
    expect(res.attempts[0]!.error!.message).toMatch(/^openai:gpt-4\.1-mini answered 500 after 3 tries: HTTP 500/);
    h.fresh();
    h.script({ [OPENAI.modelId]: [{ kind: 'drop' }] });
    const dropped = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }));
    expect(dropped.attempts[0]!.error!.message).toMatch(/^openai:gpt-4\.1-mini could not be reached: /);
  });
});

// OpenRouter's errors page: an error "while the LLM is producing the output" arrives as HTTP 200
// with `{"error": {"code": 429 | 502 | 503, "message"}}` in the body; the other protocols' error
// objects in the same place (Anthropic `{"type": "error", "error": {"type"}}`, Gemini
// `{"error": {"code", "status"}}`) are read by the same rule
const BODY_ERROR: Record<string, (code: 429 | 502) => unknown> = {
  openai: (code) => ({
    error: {
      message: code === 429 ? 'Rate limit reached for requests' : 'Bad gateway',
      type: code === 429 ? 'requests' : 'server_error',
      param: null,
      code: code === 429 ? 'rate_limit_exceeded' : null,
    },
  }),
  openrouter: (code) => ({ error: { code, message: code === 429 ? 'Rate limit exceeded' : 'Provider returned error', metadata: { provider_name: 'OpenAI' } } }),
  anthropic: (code) => ({
    type: 'error',
    error: { type: code === 429 ? 'rate_limit_error' : 'api_error', message: code === 429 ? 'Number of requests has exceeded your rate limit' : 'Internal server error' },
  }),
  gemini: (code) => ({
    error: {
      code: code === 429 ? 429 : 503,
      message: code === 429 ? 'Resource has been exhausted (e.g. check quota).' : 'The model is overloaded. Please try again later.',
      status: code === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE',
    },
  }),
};

describe('an error object inside a 200 body is a transport failure, like its streamed twin', () => {
  it.each(DIALECTS)('$dialect: a rate limit in the body waits its own wait, pauses the model, and spends no output.retries answer', async (c) => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 200, headers: { 'retry-after': '2' }, body: BODY_ERROR[c.dialect]!(429) },
        { kind: 'ok', text: 'fine' },
      ],
    });
    const t0 = h.clock.now();
    const res = await h.run(node([c.model], { policy: { retries: 0 } }));
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('fine');
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]!.tries.map((t) => [t.status, t.error, t.retryAfterMs])).toEqual([
      [200, 'rate_limited', 2000],
      [200, null, null],
    ]);
    expect(h.events.filter((e) => e.type === 'rate_limit_pause')).toHaveLength(1);
    expect(h.clock.now() - t0).toBeGreaterThanOrEqual(2000);
  });

  it.each(DIALECTS)('$dialect: a server error in the body is retried by the transport, no pause', async (c) => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 200, body: BODY_ERROR[c.dialect]!(502) },
        { kind: 'ok', text: 'fine' },
      ],
    });
    const res = await h.run(node([c.model], { policy: { retries: 0 } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]!.tries.map((t) => [t.status, t.error])).toEqual([
      [200, 'server_error'],
      [200, null],
    ]);
    expect(h.events.filter((e) => e.type === 'rate_limit_pause')).toHaveLength(0);
  });

  it('an error object without a transient code is still outcome error (a broken answer)', async () => {
    h.script({ [OPENROUTER.modelId]: [{ kind: 'status', status: 200, body: { error: { code: 400, message: 'Invalid tool call' } } }] });
    const res = await h.run(node([OPENROUTER.model], { policy: { onError: 'fail' } }));
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', cause: 'provider_error' });
    expect(res.attempts[0]!.tries).toHaveLength(1);
  });
});

const SSE = { 'content-type': 'text/event-stream' };
// OpenAI's quota error body (error-codes guide: 429 "You exceeded your current quota"), as a stream event
const OPENAI_QUOTA = {
  error: {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  },
};
// Gemini's 429 for a spent per-day free-tier quota: QuotaFailure naming a PerDay quotaId, and a RetryInfo anyway
const GEMINI_DAILY = {
  error: {
    code: 429,
    message: 'You exceeded your current quota, please check your plan and billing details.',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
            quotaDimensions: { location: 'global', model: 'gemini-2.5-flash' },
            quotaValue: '250',
          },
        ],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' },
    ],
  },
};
// OpenRouter's daily cap of free-model requests
const OPENROUTER_FREE_DAY = {
  error: {
    message: 'Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day',
    code: 429,
    metadata: { headers: { 'X-RateLimit-Limit': '50', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1767312000000' }, provider_name: null },
  },
};

describe('a spent quota is not a rate limit: never resent to the same model, never a pause, cause quota', () => {
  const QUOTAS = [
    ['OpenAI insufficient_quota inside a stream', OPENAI, true, { kind: 'status', status: 200, headers: SSE, body: `data: ${JSON.stringify(OPENAI_QUOTA)}\n\n` }],
    ['OpenAI insufficient_quota in a 200 body', OPENAI, false, { kind: 'status', status: 200, body: OPENAI_QUOTA }],
    ['OpenAI insufficient_quota as a 429', OPENAI, false, { kind: 'status', status: 429, body: OPENAI_QUOTA }],
    ['Gemini per-day QuotaFailure with a RetryInfo', GEMINI, false, { kind: 'status', status: 429, body: GEMINI_DAILY }],
    ['Gemini per-day QuotaFailure inside a stream', GEMINI, true, { kind: 'status', status: 200, headers: SSE, body: `data: ${JSON.stringify(GEMINI_DAILY)}\n\n` }],
    ['OpenRouter free-models-per-day', OPENROUTER, false, { kind: 'status', status: 429, headers: { 'retry-after': '30' }, body: OPENROUTER_FREE_DAY }],
    [
      'OpenRouter free-models-per-day inside a stream',
      OPENROUTER,
      true,
      { kind: 'status', status: 200, headers: SSE, body: `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', ...OPENROUTER_FREE_DAY })}\n\n` },
    ],
    [
      'Anthropic spend limit',
      ANTHROPIC,
      false,
      {
        kind: 'status',
        status: 429,
        body: {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'You have reached your specified workspace API usage limits.', details: { error_code: 'enforced_spend_limit_reached' } },
        },
      },
    ],
  ] as const;

  it.each(QUOTAS)('%s: one request, no pause, the node fails with code quota and a hint to raise the quota or add a fallback model', async (_n, c, stream, step) => {
    h.script({ [c.modelId]: [step as ScriptStep, { kind: 'ok', text: 'fine' }] });
    const t0 = h.clock.now();
    const res = await h.run(node([c.model], { stream, policy: { onError: 'retry', retries: 2 } }));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(h.events.filter((e) => e.type === 'rate_limit_pause')).toHaveLength(0);
    expect(h.clock.now() - t0).toBeLessThan(1000);
    expect(res.status).toBe('failed');
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', cause: 'quota', action: 'none' });
    expect(res.attempts[0]!.error!.kind).toBe('quota');
    expect(res.error!.code).toBe('quota');
    expect(res.error!.hint).toMatch(
      /^Raise the quota of .+, or add another model to fallback_models and set output\.on_error to "fallback" in agents\/classifier\.yaml — see: aqven explain quota$/,
    );
  });

  it.each(QUOTAS)('%s: fallback still works', async (_n, c, stream, step) => {
    h.script({ [c.modelId]: [step as ScriptStep], [other(c).modelId]: [{ kind: 'ok', text: 'fine' }] });
    const res = await h.run(node([c.model, other(c).model], { stream, policy: { onError: 'fallback' } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.model, a.cause, a.action])).toEqual([
      [c.model, 'quota', 'fallback'],
      [other(c).model, null, 'none'],
    ]);
  });

  it('a per-minute Gemini QuotaFailure with a RetryInfo stays a rate limit: waited out, retried', async () => {
    const perMinute = structuredClone(GEMINI_DAILY) as { error: { details: { violations?: { quotaId: string }[] }[] } };
    perMinute.error.details[0]!.violations![0]!.quotaId = 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier';
    h.script({
      [GEMINI.modelId]: [
        { kind: 'status', status: 429, body: perMinute },
        { kind: 'ok', text: 'fine' },
      ],
    });
    const res = await h.run(node([GEMINI.model]));
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]!.tries.map((t) => [t.status, t.retryAfterMs])).toEqual([
      [429, 34_000],
      [200, null],
    ]);
  });
});

// The provider declining, sent as an HTTP error. OpenRouter's errors page: a 403 when "your chosen
// model requires moderation and your input was flagged", its metadata `{reasons, flagged_input,
// provider_name, model_slug}`; Azure OpenAI's content-filtering page: a 400 with `code:
// "content_filter"` and `innererror.code: "ResponsibleAIPolicyViolation"` with its
// `content_filter_result`; OpenAI: a 400 `invalid_prompt` for a prompt flagged under its usage policy
const OPENROUTER_FLAGGED = {
  error: {
    code: 403,
    message: 'openai/gpt-oss-20b requires moderation on OpenAI. Your input was flagged for "violence/graphic". No credits were charged.',
    metadata: { reasons: ['violence/graphic'], flagged_input: 'Sort this ticket into a...', provider_name: 'OpenAI', model_slug: 'openai/gpt-oss-20b' },
  },
};
const AZURE_FILTERED = {
  error: {
    message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
    type: null,
    param: 'prompt',
    code: 'content_filter',
    status: 400,
    innererror: {
      code: 'ResponsibleAIPolicyViolation',
      content_filter_result: {
        hate: { filtered: false, severity: 'safe' },
        self_harm: { filtered: false, severity: 'safe' },
        sexual: { filtered: false, severity: 'safe' },
        violence: { filtered: true, severity: 'medium' },
      },
    },
  },
};
const OPENAI_INVALID_PROMPT = {
  error: {
    message: 'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_prompt',
  },
};

describe('a refusal sent as an HTTP error is a refusal, following on_refusal', () => {
  const REFUSALS = [
    ['OpenRouter moderation 403', OPENROUTER, 403, OPENROUTER_FLAGGED],
    ['Azure OpenAI content_filter 400', OPENAI, 400, AZURE_FILTERED],
    ['OpenAI invalid_prompt 400', OPENAI, 400, OPENAI_INVALID_PROMPT],
  ] as const;

  it.each(REFUSALS)('%s: outcome refusal, not retried, the node fails with code refusal and a hint naming on_refusal', async (_n, c, status, body) => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status, body },
        { kind: 'ok', text: 'fine' },
      ],
    });
    const res = await h.run(node([c.model]));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'refusal', cause: 'refusal', action: 'none' });
    expect(res.attempts[0]!.error).toMatchObject({ kind: 'refusal' });
    expect(res.attempts[0]!.error!.message).toMatch(new RegExp(`refused to answer: HTTP ${status}: `));
    expect(res.error).toMatchObject({ code: 'refusal' });
    expect(res.error!.hint).toContain('output.on_refusal');
    expect(res.error!.hint).not.toContain('on_error');
  });

  it.each(REFUSALS)('%s: on_refusal fallback moves to the next model', async (_n, c, status, body) => {
    h.script({ [c.modelId]: [{ kind: 'status', status, body }], [other(c).modelId]: [{ kind: 'ok', text: 'fine' }] });
    const res = await h.run(node([c.model, other(c).model], { policy: { onRefusal: 'fallback' } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.outcome, a.cause, a.action])).toEqual([
      ['refusal', 'refusal', 'fallback'],
      ['ok', null, 'none'],
    ]);
  });

  it.each([
    ['a plain 400', OPENAI, 400],
    ['a 403 that is not moderation (an unsupported region)', OPENAI, 403],
    ['an OpenRouter 401 (no key)', OPENROUTER, 401],
  ] as const)('%s stays a client error: provider_error, never retried', async (_n, c, status) => {
    h.script({ [c.modelId]: [{ kind: 'status', status }, { kind: 'ok' }] });
    const res = await h.run(node([c.model]));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', cause: 'provider_error' });
    expect(res.attempts[0]!.error!.kind).toBe('client_error');
  });
});

describe('a retry-after beyond on_rate_limit.max_wait is not undercut by the policy', () => {
  it.each(DIALECTS)('$dialect: on_error retry does not send again after the capped pause; the node fails at once naming on_rate_limit.max_wait', async (c) => {
    h.script({
      [c.modelId]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '120' } },
        { kind: 'ok', text: 'too soon' },
      ],
    });
    const t0 = h.clock.now();
    const res = await h.run(node([c.model], { policy: { onError: 'retry', retries: 2 } }));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(h.clock.now() - t0).toBeLessThan(60_000);
    expect(res.status).toBe('failed');
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', cause: 'provider_error', action: 'none' });
    expect(res.attempts[0]!.error!.message).toContain('longer than on_rate_limit.max_wait (60 s)');
    expect(res.error!.hint).toBe(
      `Raise on_rate_limit.max_wait (now 60 s) in providers/${c.provider}.yaml, or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml — see: aqven explain provider_error`,
    );
  });

  it('on_error fallback moves to the next model at once', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '120' } }], [other(OPENAI).modelId]: [{ kind: 'ok', text: 'fine' }] });
    const t0 = h.clock.now();
    const res = await h.run(node([OPENAI.model, other(OPENAI).model], { policy: { onError: 'fallback' } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.model, a.action])).toEqual([
      [OPENAI.model, 'fallback'],
      [other(OPENAI).model, 'none'],
    ]);
    expect(h.clock.now() - t0).toBeLessThan(60_000);
  });
});
