import { describe, expect, it } from 'vitest';
import type { ResolvedProvider } from '@/lib/engine/types';
import { classifyOpenAI, openaiAdapter } from './openai';
import { feed } from '@/test/helpers/sse-feed';

const provider = (baseUrl: string): ResolvedProvider => ({
  name: 'p',
  api: 'openai',
  baseUrl,
  structuredOutputs: true,
  transport: { maxAttempts: 3, budgetMs: 60_000, timeoutMs: 120_000, idleTimeoutMs: 120_000, tryDeadlineMs: 1_800_000, maxResponseBytes: 8 * 1024 * 1024 },
  onRateLimit: { maxAttempts: 5, defaultWaitMs: 1000, maxWaitMs: 60_000 },
  maxConcurrency: 16,
  models: {},
});

const sig = (finishReason: string | null, over: Partial<Parameters<typeof classifyOpenAI>[0]> = {}) => ({
  error: undefined,
  refusal: null,
  finishReason,
  nativeFinishReason: null,
  ...over,
});

describe('classifyOpenAI (DESIGN: Outcome classification, openai row)', () => {
  it.each([
    ['stop', sig('stop'), 'ok'],
    ['tool_calls', sig('tool_calls'), 'ok'],
    ['function_call', sig('function_call'), 'ok'],
    ['length', sig('length'), 'truncated'],
    ['OpenRouter native MAX_TOKENS', sig('stop', { nativeFinishReason: 'MAX_TOKENS' }), 'truncated'],
    ['OpenRouter native max_tokens', sig(null, { nativeFinishReason: 'max_tokens' }), 'truncated'],
    ['native model_context_window_exceeded', sig('stop', { nativeFinishReason: 'model_context_window_exceeded' }), 'truncated'],
    ['message.refusal with stop', sig('stop', { refusal: "I'm sorry" }), 'refusal'],
    ['content_filter', sig('content_filter'), 'refusal'],
    ['OpenRouter error', sig('error'), 'error'],
    ['an error object beats everything', sig('stop', { error: { message: 'x' }, refusal: 'no' }), 'error'],
    ['the refusal signal beats the finish reason', sig('length', { refusal: 'no' }), 'refusal'],
    ['null finish reason: nothing says otherwise, so ok', sig(null), 'ok'],
    ['unknown finish reason: ok (noted)', sig('eos'), 'ok'],
    ['Mistral model_length', sig('model_length'), 'truncated'],
    ['vLLM abort: the server gave up', sig('abort'), 'error'],
    ['vLLM repetition', sig('repetition'), 'error'],
    ['Mistral / vLLM error', sig('error'), 'error'],
    ['OpenRouter native SAFETY behind stop', sig('stop', { nativeFinishReason: 'SAFETY' }), 'refusal'],
    ['OpenRouter native refusal behind stop', sig('stop', { nativeFinishReason: 'refusal' }), 'refusal'],
    ['OpenRouter native PROHIBITED_CONTENT behind stop', sig('stop', { nativeFinishReason: 'PROHIBITED_CONTENT' }), 'refusal'],
    ['OpenRouter native RECITATION behind stop', sig('stop', { nativeFinishReason: 'RECITATION' }), 'refusal'],
    ['OpenRouter native LANGUAGE behind stop', sig('stop', { nativeFinishReason: 'LANGUAGE' }), 'refusal'],
    ['OpenRouter native content_filter behind stop', sig('stop', { nativeFinishReason: 'content_filter' }), 'refusal'],
    ['OpenRouter native MALFORMED_FUNCTION_CALL behind stop', sig('stop', { nativeFinishReason: 'MALFORMED_FUNCTION_CALL' }), 'error'],
    ['OpenRouter native model_length behind stop', sig('stop', { nativeFinishReason: 'model_length' }), 'truncated'],
    ['OpenRouter native end_turn behind stop', sig('stop', { nativeFinishReason: 'end_turn' }), 'ok'],
    ['OpenRouter native value nobody knows behind stop', sig('stop', { nativeFinishReason: 'eos' }), 'ok'],
    ['a non-ok finish_reason beats the native value', sig('content_filter', { nativeFinishReason: 'MAX_TOKENS' }), 'refusal'],
  ] as const)('%s → %s', (_n, s, outcome) => {
    expect(classifyOpenAI(s)).toBe(outcome);
  });
});

describe('openai request', () => {
  const req = {
    modelId: 'gpt-x',
    messages: [
      { role: 'system' as const, content: 'S' },
      { role: 'user' as const, content: 'U' },
    ],
    stream: false,
  };

  it('sends max_completion_tokens to api.openai.com and max_tokens to compatible servers', () => {
    const a = JSON.parse(openaiAdapter.buildRequest({ ...req, settings: { max_tokens: 10 } }, provider('https://api.openai.com/v1'), 'k').body);
    expect(a.max_completion_tokens).toBe(10);
    expect(a.max_tokens).toBeUndefined();
    const b = JSON.parse(openaiAdapter.buildRequest({ ...req, settings: { max_tokens: 10 } }, provider('https://openrouter.ai/api/v1'), 'k').body);
    expect(b.max_tokens).toBe(10);
    expect(b.max_completion_tokens).toBeUndefined();
  });

  it('streams with include_usage, strict sends response_format json_schema, bearer key', () => {
    const schema = { type: 'object' };
    const w = openaiAdapter.buildRequest({ ...req, stream: true, responseSchema: schema, settings: { temperature: 0.2 } }, provider('http://h/v1/'), 'sk-1');
    expect(w.url).toBe('http://h/v1/chat/completions');
    expect(w.headers.authorization).toBe('Bearer sk-1');
    expect(JSON.parse(w.body)).toEqual({
      temperature: 0.2,
      model: 'gpt-x',
      messages: req.messages,
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } },
    });
  });

  it('sends no authorization header without a key', () => {
    expect(openaiAdapter.buildRequest(req, provider('http://h'), undefined).headers.authorization).toBeUndefined();
  });
});

describe('openai responses', () => {
  it('reads text, usage and OpenRouter cost and native finish reason', () => {
    const r = openaiAdapter.parseBody(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, finish_reason: 'stop', native_finish_reason: 'STOP' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, cost: 0.0001 },
      }),
    );
    expect(r).toMatchObject({ outcome: 'ok', text: 'hi', finishReason: 'stop', nativeFinishReason: 'STOP', usage: { inputTokens: 5, outputTokens: 2, costUsd: 0.0001 } });
  });

  // Usage as xAI reports it (docs.x.ai "Cost Tracking"; public grok-3-mini replies): completion_tokens
  // leaves the reasoning out, total_tokens counts it, and all of it is billed; the charged cost in
  // cost_in_usd_ticks (1 USD = 1e10 ticks). Numbers are ours.
  it('xAI: reasoning outside completion_tokens is billed output; cost_in_usd_ticks is the charged cost', () => {
    const r = openaiAdapter.parseBody(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: '42' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 12,
          completion_tokens: 1,
          total_tokens: 303,
          prompt_tokens_details: { text_tokens: 12, audio_tokens: 0, image_tokens: 0, cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 290, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
          num_sources_used: 0,
          cost_in_usd_ticks: 1_477_000,
        },
      }),
    );
    expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 291, reasoningTokens: 290, costUsd: 0.0001477 });
  });

  // OpenAI's reasoning models: completion_tokens already include completion_tokens_details.reasoning_tokens
  it('OpenAI: reasoning tokens are part of completion_tokens, recorded apart, not added twice', () => {
    const r = openaiAdapter.parseBody(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 20, completion_tokens: 150, total_tokens: 170, completion_tokens_details: { reasoning_tokens: 128 } },
      }),
    );
    expect(r.usage).toEqual({ inputTokens: 20, outputTokens: 150, reasoningTokens: 128, costUsd: null });
  });

  it('a choice error inside a 200 is error', () => {
    const r = openaiAdapter.parseBody(
      JSON.stringify({ choices: [{ index: 0, message: { content: null }, finish_reason: 'error', error: { code: 502, message: 'upstream broke' } }] }),
    );
    expect(r.outcome).toBe('error');
    expect(r.error?.message).toBe('upstream broke');
  });

  it('a refusal arrives in message.refusal with content null', () => {
    const r = openaiAdapter.parseBody(JSON.stringify({ choices: [{ message: { content: null, refusal: "I'm sorry" }, finish_reason: 'stop' }] }));
    expect(r).toMatchObject({ outcome: 'refusal', refusal: "I'm sorry", text: '' });
  });

  it('an unrecognised finish reason is ok, validated as usual, stored as sent and noted', () => {
    const r = openaiAdapter.parseBody(JSON.stringify({ choices: [{ message: { content: '{"a":1}' }, finish_reason: 'eos' }] }));
    expect(r).toMatchObject({ outcome: 'ok', text: '{"a":1}', finishReason: 'eos', note: 'unrecognised finish reason `eos`', error: null });
  });

  it('a whole response with no finish reason is ok, noted', () => {
    const r = openaiAdapter.parseBody(JSON.stringify({ choices: [{ message: { content: 'hi' }, finish_reason: null }] }));
    expect(r).toMatchObject({ outcome: 'ok', finishReason: null, note: 'no finish reason' });
  });

  it('a known value carries no note; vLLM abort is error with the words', () => {
    expect(openaiAdapter.parseBody(JSON.stringify({ choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] })).note).toBeNull();
    const r = openaiAdapter.parseBody(JSON.stringify({ choices: [{ message: { content: 'x' }, finish_reason: 'abort' }] }));
    expect(r).toMatchObject({ outcome: 'error', note: null });
    expect(r.error?.message).toBe('finish_reason "abort": the server gave up on the response');
  });

  it('a body that is not JSON is error', () => {
    expect(openaiAdapter.parseBody('<html>').outcome).toBe('error');
  });

  it('a refusal sent as an HTTP error is recognised: OpenRouter moderation 403, Azure content_filter 400, OpenAI invalid_prompt 400; other 4xx are not', () => {
    const read = (status: number, body: unknown) => openaiAdapter.readError(status, body, JSON.stringify(body)).refusal;
    expect(read(403, { error: { code: 403, message: 'Your input was flagged for "harassment".', metadata: { reasons: ['harassment'], flagged_input: '...' } } })).toBe(true);
    expect(read(400, { error: { message: 'filtered', code: 'content_filter', innererror: { code: 'ResponsibleAIPolicyViolation' } } })).toBe(true);
    expect(read(400, { error: { message: 'Invalid prompt: flagged', type: 'invalid_request_error', code: 'invalid_prompt' } })).toBe(true);
    expect(read(403, { error: { message: 'Country, region, or territory not supported', type: 'request_forbidden', code: 'unsupported_country_region_territory' } })).toBe(false);
    expect(read(400, { error: { message: 'Invalid request.', type: 'invalid_request_error', code: null } })).toBe(false);
    expect(read(401, { error: { code: 401, message: 'No auth credentials found' } })).toBe(false);
    expect(read(403, { error: { code: 403, message: 'Your account has been flagged for review' } })).toBe(false);
  });

  it('quota 429s are recognised, also inside OpenRouter metadata.raw', () => {
    const raw = JSON.stringify({ error: { message: 'x', type: 'insufficient_quota', code: 'insufficient_quota' } });
    expect(openaiAdapter.readError(429, JSON.parse(raw), raw)).toEqual({ message: 'x', quota: true, refusal: false });
    const or = JSON.stringify({ error: { code: 429, message: 'Provider returned error', metadata: { raw } } });
    expect(openaiAdapter.readError(429, JSON.parse(or), or).quota).toBe(true);
    const rl = JSON.stringify({ error: { message: 'slow down', code: 'rate_limit_exceeded' } });
    expect(openaiAdapter.readError(429, JSON.parse(rl), rl).quota).toBe(false);
  });
});

describe('openai streams', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

  it('only content resets transport.idle_timeout: role-only and empty chunks do not; text, tool calls, reasoning, the finish, usage and [DONE] do', async () => {
    const { progress } = await feed(openaiAdapter, [
      ': OPENROUTER PROCESSING\n\n', // a comment never reaches the adapter
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: '' }),
      chunk({ reasoning: 'thinking…' }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }),
      chunk({ content: 'Hi' }),
      chunk({}, 'stop'),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`,
      'data: [DONE]\n\n',
    ]);
    expect(progress).toEqual([false, false, true, true, true, true, true, true]);
  });

  it('delivers deltas in order, skips OpenRouter comments, reads the usage chunk', async () => {
    const { deltas, result } = await feed(openaiAdapter, [
      ': OPENROUTER PROCESSING\n\n',
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`,
      'data: [DONE]\n\n',
    ]);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(result).toMatchObject({ outcome: 'ok', text: 'Hello', usage: { inputTokens: 3, outputTokens: 2 } });
  });

  it('delta.refusal is a refusal', async () => {
    const { result } = await feed(openaiAdapter, [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: 'No.' }), chunk({}, 'stop'), 'data: [DONE]\n\n']);
    expect(result).toMatchObject({ outcome: 'refusal', refusal: 'No.' });
  });

  it('a mid-stream rate-limit chunk (OpenRouter shape, WIRE.md) breaks the stream: rate_limited, not an answer', async () => {
    const { broken } = await feed(openaiAdapter, [
      chunk({ content: 'par' }),
      `data: {"id":"gen-1","object":"chat.completion.chunk","model":"openai/gpt-4o","error":{"code":429,"message":"Rate limit exceeded","metadata":{"error_type":"rate_limit_exceeded"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n`,
    ]);
    expect(broken).toMatchObject({ error: 'rate_limited', message: 'a rate-limit error event in the stream: Rate limit exceeded' });
    expect(JSON.parse(broken!.detail!)).toMatchObject({ code: 429 });
  });

  it.each([
    ['OpenRouter 502', { code: 502, message: 'Provider returned error', metadata: { error_type: 'provider_error' } }, 'server_error'],
    ['OpenRouter 503 as a string', { code: '503', message: 'down' }, 'server_error'],
    ['OpenAI server_error without a code', { message: 'The server had an error', type: 'server_error', code: null }, 'server_error'],
    ['OpenAI rate_limit_exceeded', { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' }, 'rate_limited'],
    ['a 408', { code: 408, message: 'timed out' }, 'timeout'],
    [
      'a quota, which waiting will not clear (not retried: the transport reads `quota`)',
      { code: 429, message: 'quota', metadata: { raw: '{"error":{"code":"insufficient_quota"}}' } },
      'quota',
    ],
    [
      "OpenRouter's free-models-per-day cap",
      { code: 429, message: 'Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day' },
      'quota',
    ],
  ])('an error chunk reporting a transient failure or a quota breaks the stream: %s → %s', async (_n, error, kind) => {
    const { broken } = await feed(openaiAdapter, [chunk({ content: 'par' }), `data: ${JSON.stringify({ error })}\n\n`]);
    expect(broken?.error).toBe(kind);
  });

  it.each([
    ['a 400', { code: 400, message: 'bad' }],
    ['no status and no known words', { message: 'The model produced an invalid tool call.', type: 'invalid_response_error', code: 'invalid_tool_call' }],
  ])('an error chunk reporting anything else is outcome error: %s', async (_n, error) => {
    const { broken, result } = await feed(openaiAdapter, [chunk({ content: 'par' }), `data: ${JSON.stringify({ error })}\n\n`]);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'error', text: 'par' });
  });

  it("a choice's own error (the provider ended the answer with an error) is outcome error, whatever its code", async () => {
    const { broken, result } = await feed(openaiAdapter, [
      chunk({ content: 'par' }),
      chunk({}, 'error', {}).replace('"finish_reason":"error"', '"finish_reason":"error","error":{"code":502,"message":"upstream broke"}'),
    ]);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'error', finishReason: 'error' });
    expect(result.error?.message).toBe('upstream broke');
  });

  it('a broken answer behind a 502 (native MALFORMED_FUNCTION_CALL) stays outcome error', async () => {
    const { broken, result } = await feed(openaiAdapter, [
      chunk({ content: 'par' }),
      `data: ${JSON.stringify({ error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'MALFORMED_FUNCTION_CALL' }] })}\n\n`,
    ]);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'error', nativeFinishReason: 'MALFORMED_FUNCTION_CALL' });
  });

  it('a stream that ends with no finish reason did not complete: broken, like a dropped connection', async () => {
    const { broken } = await feed(openaiAdapter, [chunk({ content: 'abc' }), 'data: [DONE]\n\n']);
    expect(broken).toEqual({ error: 'connection', message: 'the stream ended without a finish_reason: the response did not complete', detail: null });
  });

  it('a stream with an unrecognised finish reason completed: ok, noted', async () => {
    const { broken, result } = await feed(openaiAdapter, [chunk({ content: 'abc' }), chunk({}, 'eos'), 'data: [DONE]\n\n']);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'ok', text: 'abc', finishReason: 'eos', note: 'unrecognised finish reason `eos`' });
  });
});
