import { describe, expect, it } from 'vitest';
import type { ResolvedProvider } from '@/lib/engine/types';
import { classifyOpenAI, openaiAdapter } from './openai';
import { feed } from '@/test/helpers/sse-feed';

const provider = (baseUrl: string): ResolvedProvider => ({
  name: 'p',
  api: 'openai',
  baseUrl,
  structuredOutputs: true,
  transport: { maxAttempts: 3, budgetMs: 60_000, timeoutMs: 120_000 },
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
    ['null finish reason', sig(null), 'error'],
    ['unknown finish reason', sig('eos'), 'error'],
  ] as const)('%s → %s', (_n, s, outcome) => {
    expect(classifyOpenAI(s)).toBe(outcome);
  });
});

describe('openai request', () => {
  const req = { modelId: 'gpt-x', messages: [{ role: 'system' as const, content: 'S' }, { role: 'user' as const, content: 'U' }], stream: false };

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

  it('a body that is not JSON is error', () => {
    expect(openaiAdapter.parseBody('<html>').outcome).toBe('error');
  });

  it('quota 429s are recognised, also inside OpenRouter metadata.raw', () => {
    const raw = JSON.stringify({ error: { message: 'x', type: 'insufficient_quota', code: 'insufficient_quota' } });
    expect(openaiAdapter.readError(429, JSON.parse(raw), raw)).toEqual({ message: 'x', quota: true });
    const or = JSON.stringify({ error: { code: 429, message: 'Provider returned error', metadata: { raw } } });
    expect(openaiAdapter.readError(429, JSON.parse(or), or).quota).toBe(true);
    const rl = JSON.stringify({ error: { message: 'slow down', code: 'rate_limit_exceeded' } });
    expect(openaiAdapter.readError(429, JSON.parse(rl), rl).quota).toBe(false);
  });
});

describe('openai streams', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

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

  it('a mid-stream error chunk is error (OpenRouter shape)', async () => {
    const { result } = await feed(openaiAdapter, [
      chunk({ content: 'par' }),
      `data: {"id":"gen-1","object":"chat.completion.chunk","model":"openai/gpt-4o","error":{"code":429,"message":"Rate limit exceeded","metadata":{"error_type":"rate_limit_exceeded"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n`,
    ]);
    expect(result).toMatchObject({ outcome: 'error', text: 'par', finishReason: 'error' });
    expect(result.error?.message).toBe('Rate limit exceeded');
  });

  it('a stream that ends with no finish reason is error', async () => {
    const { result } = await feed(openaiAdapter, [chunk({ content: 'abc' })]);
    expect(result.outcome).toBe('error');
    expect(result.error?.message).toMatch(/without a finish_reason/);
  });
});
