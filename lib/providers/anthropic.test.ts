import { describe, expect, it } from 'vitest';
import { builtInProvider } from '@/lib/project/builtin-providers';
import { anthropicAdapter, classifyAnthropic } from './anthropic';
import { feed } from '@/test/helpers/sse-feed';

// the built-in provider with every default, as a project without providers/ gets it
const provider = builtInProvider('anthropic')!;

describe('classifyAnthropic (DESIGN: Outcome classification, anthropic row)', () => {
  const s = (stopReason: string | null, over = {}) => ({ error: undefined, stopReason, ...over });
  it.each([
    ['end_turn', s('end_turn'), 'ok'],
    ['stop_sequence', s('stop_sequence'), 'ok'],
    ['tool_use', s('tool_use'), 'ok'],
    ['max_tokens', s('max_tokens'), 'truncated'],
    ['model_context_window_exceeded', s('model_context_window_exceeded'), 'truncated'],
    ['refusal', s('refusal'), 'refusal'],
    ['pause_turn is error until continuation exists', s('pause_turn'), 'error'],
    ['unknown: nothing says otherwise, so ok (noted)', s('something_new'), 'ok'],
    ['no stop reason on a whole message: ok (noted)', s(null), 'ok'],
    ['error event', s('end_turn', { error: { type: 'error' } }), 'error'],
  ] as const)('%s → %s', (_n, sig, outcome) => {
    expect(classifyAnthropic(sig)).toBe(outcome);
  });
});

describe('anthropic request', () => {
  it('puts system apart, requires max_tokens (default 4096), sends x-api-key and anthropic-version', () => {
    const w = anthropicAdapter.buildRequest(
      {
        modelId: 'claude-x',
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U' },
        ],
        stream: false,
      },
      provider,
      'key-1',
    );
    expect(w.url).toBe('https://api.anthropic.com/v1/messages');
    expect(w.headers['x-api-key']).toBe('key-1');
    expect(w.headers['anthropic-version']).toBe('2023-06-01');
    expect(JSON.parse(w.body)).toEqual({ model: 'claude-x', max_tokens: 4096, system: 'S', messages: [{ role: 'user', content: 'U' }] });
  });

  it('strict sends output_config.format; max_tokens from settings', () => {
    const schema = { type: 'object' };
    const body = JSON.parse(
      anthropicAdapter.buildRequest(
        { modelId: 'c', messages: [{ role: 'user', content: 'U' }], stream: true, responseSchema: schema, settings: { max_tokens: 50, temperature: 0 } },
        provider,
        undefined,
      ).body,
    );
    expect(body).toMatchObject({ max_tokens: 50, temperature: 0, stream: true, output_config: { format: { type: 'json_schema', schema } } });
  });
});

describe('anthropic responses', () => {
  it('reads text and usage', () => {
    const r = anthropicAdapter.parseBody(
      JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 4, output_tokens: 1 } }),
    );
    expect(r).toMatchObject({ outcome: 'ok', text: 'hi', finishReason: 'end_turn', usage: { inputTokens: 4, outputTokens: 1, costUsd: null } });
  });

  it('a refusal keeps its text', () => {
    const r = anthropicAdapter.parseBody(
      JSON.stringify({ type: 'message', content: [], stop_reason: 'refusal', stop_details: { type: 'refusal', explanation: 'declined' }, usage: {} }),
    );
    expect(r).toMatchObject({ outcome: 'refusal', refusal: 'declined' });
  });

  it('an unrecognised stop_reason is ok, stored as sent and noted; a missing one too', () => {
    const r = anthropicAdapter.parseBody(JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'hi' }], stop_reason: 'compaction', usage: {} }));
    expect(r).toMatchObject({ outcome: 'ok', text: 'hi', finishReason: 'compaction', note: 'unrecognised finish reason `compaction`' });
    const n = anthropicAdapter.parseBody(JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'hi' }], stop_reason: null, usage: {} }));
    expect(n).toMatchObject({ outcome: 'ok', note: 'no finish reason' });
  });

  it('a spend-limit 429 is quota', () => {
    const raw = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'limit', details: { error_code: 'enforced_spend_limit_reached' } } });
    expect(anthropicAdapter.readError(429, JSON.parse(raw), raw)).toEqual({ message: 'limit', quota: true });
  });
});

describe('anthropic streams', () => {
  const ev = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const start = ev('message_start', { message: { usage: { input_tokens: 7, output_tokens: 1 } } });
  const delta = (text: string) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });

  it('text deltas, cumulative usage, message_stop ends it', async () => {
    const { deltas, result } = await feed(anthropicAdapter, [
      start,
      ev('ping', {}),
      delta('Hel'),
      delta('lo'),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      ev('message_stop', {}),
    ]);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(result).toMatchObject({ outcome: 'ok', text: 'Hello', usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it.each([
    ['overloaded_error', 'server_error'],
    ['api_error', 'server_error'],
    ['timeout_error', 'server_error'],
    ['rate_limit_error', 'rate_limited'],
  ])('an error event of type %s mid-stream is the call never completing: the stream is broken (%s)', async (type, kind) => {
    const { broken } = await feed(anthropicAdapter, [start, delta('par'), ev('error', { error: { type, message: 'Overloaded' } })]);
    expect(broken).toMatchObject({ error: kind });
    expect(broken!.message).toMatch(/event in the stream.*: Overloaded$/);
  });

  it('an error event that is not transient (a broken answer) is outcome error', async () => {
    const { broken, result } = await feed(anthropicAdapter, [start, delta('par'), ev('error', { error: { type: 'invalid_request_error', message: 'malformed tool use' } })]);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'error', text: 'par' });
    expect(result.error?.message).toBe('malformed tool use');
  });

  it('a spend-limit error event is a quota: the stream breaks as `quota`, not retried by the transport, no pause', async () => {
    const { broken } = await feed(anthropicAdapter, [
      start,
      ev('error', { error: { type: 'rate_limit_error', message: 'limit', details: { error_code: 'enforced_spend_limit_reached' } } }),
    ]);
    expect(broken?.error).toBe('quota');
  });

  it('only content resets transport.idle_timeout: pings, message_start and block openings do not; text, tool-input and thinking deltas do', async () => {
    const { progress } = await feed(anthropicAdapter, [
      start,
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      ev('ping', {}),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
      delta('Hi'),
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      ev('message_stop', {}),
    ]);
    expect(progress).toEqual([false, false, false, true, true, false, true, false, true, true]);
  });

  it('a stream that ends without a stop_reason did not complete: broken, like a dropped connection', async () => {
    const { broken } = await feed(anthropicAdapter, [start, delta('par'), ev('content_block_stop', { index: 0 })]);
    expect(broken).toMatchObject({ error: 'connection', message: 'the stream ended without a stop_reason: the response did not complete' });
  });

  it('a stop_reason came but message_stop did not: the answer is whole', async () => {
    const { broken, result } = await feed(anthropicAdapter, [start, delta('par'), ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: {} })]);
    expect(broken).toBeNull();
    expect(result).toMatchObject({ outcome: 'ok', text: 'par' });
  });
});
