import { describe, expect, it } from 'vitest';
import { builtInProvider } from '@/lib/project/builtin-providers';
import { classifyGemini, geminiAdapter } from './gemini';
import { feed } from '@/test/helpers/sse-feed';

// the built-in provider with every default, as a project without providers/ gets it
const provider = builtInProvider('google')!;

describe('classifyGemini (DESIGN: Outcome classification, gemini row)', () => {
  const s = (finishReason: string | null, over = {}) => ({ error: undefined, blockReason: null, finishReason, ...over });
  it.each([
    ...['STOP'].map((f) => [f, 'ok'] as const),
    ['MAX_TOKENS', 'truncated'] as const,
    ...['SAFETY', 'RECITATION', 'LANGUAGE', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'MODEL_ARMOR'].map(
      (f) => [f, 'refusal'] as const,
    ),
    ...['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'MALFORMED_RESPONSE', 'MISSING_THOUGHT_SIGNATURE', 'OTHER', 'IMAGE_OTHER', 'NO_IMAGE'].map(
      (f) => [f, 'error'] as const,
    ),
    ...['FINISH_REASON_UNSPECIFIED', 'NEW_VALUE'].map((f) => [f, 'ok'] as const),
  ])('%s → %s', (fr, outcome) => {
    expect(classifyGemini(s(fr))).toBe(outcome);
  });
  it('no finish reason → ok; a blocked prompt → refusal; an error object → error', () => {
    expect(classifyGemini(s(null))).toBe('ok');
    expect(classifyGemini(s(null, { blockReason: 'SAFETY' }))).toBe('refusal');
    expect(classifyGemini(s('STOP', { error: { code: 503 } }))).toBe('error');
  });
});

describe('gemini request', () => {
  it('systemInstruction, contents with role model, generationConfig, x-goog-api-key', () => {
    const schema = { type: 'object' };
    const w = geminiAdapter.buildRequest(
      {
        modelId: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U' },
          { role: 'assistant', content: 'A' },
          { role: 'user', content: 'U2' },
        ],
        settings: { temperature: 0.1, max_tokens: 64, top_p: 0.9 },
        responseSchema: schema,
        stream: false,
      },
      provider,
      'gk',
    );
    expect(w.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(w.headers['x-goog-api-key']).toBe('gk');
    expect(JSON.parse(w.body)).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'U' }] },
        { role: 'model', parts: [{ text: 'A' }] },
        { role: 'user', parts: [{ text: 'U2' }] },
      ],
      systemInstruction: { parts: [{ text: 'S' }] },
      generationConfig: { temperature: 0.1, maxOutputTokens: 64, topP: 0.9, responseMimeType: 'application/json', responseJsonSchema: schema },
    });
  });

  it('the model id is one encoded path segment: no id reaches another endpoint of the host with the key', () => {
    const w = geminiAdapter.buildRequest({ modelId: 'x/../../../v1beta/cachedContents?', messages: [{ role: 'user', content: 'U' }], stream: false }, provider, 'gk');
    const url = new URL(w.url);
    expect(url.origin + url.pathname).toBe('https://generativelanguage.googleapis.com/v1beta/models/x%2F..%2F..%2F..%2Fv1beta%2FcachedContents%3F:generateContent');
    expect(url.search).toBe('');
    for (const [id, segment] of [
      ['gemini-2.5-flash', 'gemini-2.5-flash'],
      ['gemini-exp:1206', 'gemini-exp%3A1206'],
      ['a#b', 'a%23b'],
      ['..', '..'],
    ]) {
      const u = new URL(geminiAdapter.buildRequest({ modelId: id, messages: [], stream: true }, provider, 'gk').url);
      expect(u.pathname).toBe(`/v1beta/models/${segment}:streamGenerateContent`);
      expect(u.search).toBe('?alt=sse');
    }
  });

  it('streams over streamGenerateContent?alt=sse', () => {
    const w = geminiAdapter.buildRequest({ modelId: 'models/g', messages: [{ role: 'user', content: 'U' }], stream: true }, provider, undefined);
    expect(w.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse');
  });
});

describe('gemini responses', () => {
  it('thoughts count as output tokens; thought parts are not text', () => {
    const r = geminiAdapter.parseBody(
      JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text: 'hmm', thought: true }, { text: 'hi' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 30 },
      }),
    );
    expect(r).toMatchObject({ outcome: 'ok', text: 'hi', usage: { inputTokens: 10, outputTokens: 32, reasoningTokens: 30 } });
  });

  it('a blocked prompt is HTTP 200 with promptFeedback.blockReason → refusal', () => {
    const r = geminiAdapter.parseBody(JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3 } }));
    expect(r).toMatchObject({ outcome: 'refusal', finishReason: 'promptFeedback.blockReason: PROHIBITED_CONTENT' });
  });

  it('an unrecognised or missing finishReason is ok, stored as sent and noted', () => {
    const body = (finishReason?: string) => JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, ...(finishReason && { finishReason }) }] });
    expect(geminiAdapter.parseBody(body('NEW_VALUE'))).toMatchObject({ outcome: 'ok', finishReason: 'NEW_VALUE', note: 'unrecognised finish reason `NEW_VALUE`' });
    expect(geminiAdapter.parseBody(body())).toMatchObject({ outcome: 'ok', finishReason: null, note: 'no finish reason' });
    expect(geminiAdapter.parseBody(body('FINISH_REASON_UNSPECIFIED'))).toMatchObject({ outcome: 'ok', note: 'no finish reason (FINISH_REASON_UNSPECIFIED)' });
    expect(geminiAdapter.parseBody(body('STOP')).note).toBeNull();
  });

  it('a 429 with QuotaFailure and no RetryInfo is quota; with RetryInfo it is not', () => {
    const q = { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }] } };
    expect(geminiAdapter.readError(429, q, JSON.stringify(q)).quota).toBe(true);
    q.error.details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' } as never);
    expect(geminiAdapter.readError(429, q, JSON.stringify(q)).quota).toBe(false);
    const plain = { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'busy', details: [] } };
    expect(geminiAdapter.readError(429, plain, JSON.stringify(plain)).quota).toBe(false);
  });

  it('a QuotaFailure naming a per-day quota is a quota even with a RetryInfo: its 34 s do not bring the day back', () => {
    const violation = {
      quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
      quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
      quotaValue: '250',
    };
    const daily = {
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'You exceeded your current quota',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [violation] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' },
        ],
      },
    };
    expect(geminiAdapter.readError(429, daily, JSON.stringify(daily)).quota).toBe(true);
    violation.quotaId = 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier';
    violation.quotaMetric = 'generativelanguage.googleapis.com/generate_content_free_tier_requests';
    expect(geminiAdapter.readError(429, daily, JSON.stringify(daily)).quota).toBe(false);
  });
});

describe('gemini streams', () => {
  const chunk = (text: string, finishReason?: string, out = 1) =>
    `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: out } })}\r\n\r\n`;

  it('only content resets transport.idle_timeout: an empty chunk does not; text, a thought, a function call and the finish do', async () => {
    const raw = (obj: unknown) => `data: ${JSON.stringify(obj)}\r\n\r\n`;
    const { progress } = await feed(geminiAdapter, [
      raw({ candidates: [{ content: { role: 'model', parts: [] }, index: 0 }], usageMetadata: { promptTokenCount: 4 } }),
      raw({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] } }] }),
      raw({ candidates: [{ content: { role: 'model', parts: [{ text: 'hmm', thought: true }] } }] }),
      raw({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] } }] }),
      chunk('Hi'),
      chunk('', 'STOP'),
    ]);
    expect(progress).toEqual([false, false, true, true, true, true]);
  });

  it('accepts \\r\\n\\r\\n separators, takes the last (cumulative) usage', async () => {
    const { deltas, result } = await feed(geminiAdapter, [chunk('Hel', undefined, 1), chunk('lo', 'STOP', 2)]);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(result).toMatchObject({ outcome: 'ok', text: 'Hello', usage: { inputTokens: 4, outputTokens: 2 } });
  });

  it('accepts \\r\\r separators', async () => {
    const { result } = await feed(geminiAdapter, [chunk('a').replace('\r\n\r\n', '\r\r'), chunk('b', 'STOP').replace('\r\n\r\n', '\r\r')]);
    expect(result).toMatchObject({ outcome: 'ok', text: 'ab' });
  });

  it('a stream with no finish reason did not complete: broken, like a dropped connection', async () => {
    const { broken } = await feed(geminiAdapter, [chunk('a')]);
    expect(broken).toMatchObject({ error: 'connection', message: 'the stream ended without a finishReason: the response did not complete' });
  });

  it('a blocked prompt streams no finish reason, and is whole: refusal', async () => {
    const { broken, result } = await feed(geminiAdapter, [`data: ${JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } })}\r\n\r\n`]);
    expect(broken).toBeNull();
    expect(result.outcome).toBe('refusal');
  });

  it.each([
    ['503 UNAVAILABLE', { code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded.' }, 'server_error'],
    ['500 INTERNAL', { code: 500, status: 'INTERNAL', message: 'internal' }, 'server_error'],
    ['429 RESOURCE_EXHAUSTED', { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'slow down' }, 'rate_limited'],
  ])('an error chunk mid-stream reporting %s breaks the stream (%s)', async (_n, error, kind) => {
    const { broken } = await feed(geminiAdapter, [chunk('a'), `data: ${JSON.stringify({ error })}\r\n\r\n`]);
    expect(broken?.error).toBe(kind);
  });

  it('a quota error chunk (QuotaFailure, no RetryInfo) breaks the stream as a quota: not retried, no pause', async () => {
    const error = { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }] };
    const { broken } = await feed(geminiAdapter, [chunk('a'), `data: ${JSON.stringify({ error })}\r\n\r\n`]);
    expect(broken?.error).toBe('quota');
  });
});
