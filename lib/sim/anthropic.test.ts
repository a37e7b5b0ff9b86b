// Anthropic Messages wire shapes (WIRE.md "anthropic") per script step.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type ScriptStep, type SimServer } from './index';
import { createAjv } from '@/lib/shared/ajv';
import { call, jsonData, readSse, SCHEMA, type SseEvent } from '@/test/helpers/sim-test-client';

const ajv = createAjv('validate');
let sim: SimServer;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

function play(...steps: ScriptStep[]) {
  sim.loadScripts({ '*': steps });
}

function names(events: SseEvent[]): string[] {
  // Collapse the delta run so the sequence reads like the protocol.
  return events.map((e) => e.event!).filter((n, i, all) => n !== 'content_block_delta' || all[i - 1] !== 'content_block_delta');
}

function deltas(events: SseEvent[]): string {
  return jsonData(events.filter((e) => e.event === 'content_block_delta'))
    .map((d) => d.delta.text)
    .join('');
}

describe('anthropic: ok', () => {
  it('non-stream: message with text content, end_turn and the four usage counters; schema from output_config', async () => {
    const res = await call(sim, 'anthropic', { schema: SCHEMA });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const body = await res.json();
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      stop_reason: 'end_turn',
      stop_sequence: null,
      stop_details: null,
      content: [{ type: 'text', text: expect.any(String) }],
    });
    expect(body.id).toMatch(/^msg_/);
    expect(ajv.validate(SCHEMA, JSON.parse(body.content[0].text))).toBe(true);
    expect(body.usage).toMatchObject({
      input_tokens: expect.any(Number),
      output_tokens: Math.ceil(body.content[0].text.length / 4),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('strict:false prompting: schema from the last user message', async () => {
    const body = await (await call(sim, 'anthropic', { schema: SCHEMA, carrier: 'prompt' })).json();
    expect(ajv.validate(SCHEMA, JSON.parse(body.content[0].text))).toBe(true);
  });

  it('stream: message_start … ping … deltas … message_delta, message_stop; cumulative usage; no [DONE]', async () => {
    const res = await call(sim, 'anthropic', { stream: true, schema: SCHEMA });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const { events } = await readSse(res);
    expect(names(events)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
    expect(events.some((e) => e.data === '[DONE]')).toBe(false);
    const data = jsonData(events);
    const start = data[0].message;
    expect(start).toMatchObject({ role: 'assistant', content: [], stop_reason: null });
    const delta = data.find((d) => d.type === 'message_delta')!;
    expect(delta.delta).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
    const text = deltas(events);
    expect(ajv.validate(SCHEMA, JSON.parse(text))).toBe(true);
    expect(start.usage.output_tokens).toBeLessThanOrEqual(delta.usage.output_tokens);
    expect(delta.usage.output_tokens).toBe(Math.ceil(text.length / 4));
    expect(start.usage.input_tokens).toBeGreaterThan(0);
  });
});

describe('anthropic: failure steps', () => {
  it('invalid: JSON failing the schema, end_turn', async () => {
    play({ kind: 'invalid', mode: 'wrong_enum' });
    const body = await (await call(sim, 'anthropic', { schema: SCHEMA })).json();
    expect(body.stop_reason).toBe('end_turn');
    expect(ajv.validate(SCHEMA, JSON.parse(body.content[0].text))).toBe(false);
  });

  it('truncated: max_tokens with cut JSON, streamed too', async () => {
    play({ kind: 'truncated' });
    const body = await (await call(sim, 'anthropic', { schema: SCHEMA })).json();
    expect(body.stop_reason).toBe('max_tokens');
    expect(() => JSON.parse(body.content[0].text)).toThrow();
    const { events } = await readSse(await call(sim, 'anthropic', { schema: SCHEMA, stream: true }));
    expect(jsonData(events).find((d) => d.type === 'message_delta')!.delta.stop_reason).toBe('max_tokens');
    expect(events.at(-1)!.event).toBe('message_stop');
  });

  it('refusal: stop_reason refusal with stop_details; the scripted text is the content', async () => {
    play({ kind: 'refusal', text: 'I will not contact jane.doe@example.com.' });
    const body = await (await call(sim, 'anthropic')).json();
    expect(body.stop_reason).toBe('refusal');
    expect(body.stop_details).toMatchObject({ type: 'refusal', category: expect.any(String), explanation: expect.any(String) });
    expect(body.content[0].text).toBe('I will not contact jane.doe@example.com.');
    const { events } = await readSse(await call(sim, 'anthropic', { stream: true }));
    const md = jsonData(events).find((d) => d.type === 'message_delta')!;
    expect(md.delta).toMatchObject({ stop_reason: 'refusal', stop_details: { type: 'refusal' } });
    expect(deltas(events)).toBe('I will not contact jane.doe@example.com.');
  });

  it('provider_error: a 200 message with stop_reason pause_turn (stream and not)', async () => {
    play({ kind: 'provider_error' });
    const res = await call(sim, 'anthropic');
    expect(res.status).toBe(200);
    expect((await res.json()).stop_reason).toBe('pause_turn');
    const { events } = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(jsonData(events).find((d) => d.type === 'message_delta')!.delta.stop_reason).toBe('pause_turn');
  });

  it('stream_error: deltas then event: error overloaded_error, no message_stop', async () => {
    play({ kind: 'stream_error' });
    const { events } = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(deltas(events).length).toBeGreaterThan(0);
    expect(events.at(-1)!.event).toBe('error');
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(events.some((e) => e.event === 'message_stop')).toBe(false);
  });

  it('stream_error variants: rate_limit → rate_limit_error, malformed_call → invalid_request_error', async () => {
    play({ kind: 'stream_error', variant: 'rate_limit' }, { kind: 'stream_error', variant: 'malformed_call' });
    const rl = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(JSON.parse(rl.events.at(-1)!.data).error.type).toBe('rate_limit_error');
    const mc = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(JSON.parse(mc.events.at(-1)!.data).error.type).toBe('invalid_request_error');
  });

  it('finish_reason: null sends stop_reason null (body and message_delta)', async () => {
    play({ kind: 'ok', finish_reason: null });
    expect((await (await call(sim, 'anthropic')).json()).stop_reason).toBeNull();
    const { events } = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(jsonData(events).find((d) => d.type === 'message_delta')!.delta.stop_reason).toBeNull();
  });

  it('finish_reason override (e.g. model_context_window_exceeded)', async () => {
    play({ kind: 'truncated', finish_reason: 'model_context_window_exceeded' });
    expect((await (await call(sim, 'anthropic')).json()).stop_reason).toBe('model_context_window_exceeded');
  });
});

describe('anthropic: status', () => {
  it('529 overloaded_error with request_id body and request-id header', async () => {
    play({ kind: 'status', status: 529, headers: { 'x-should-retry': 'true' } });
    const res = await call(sim, 'anthropic');
    expect(res.status).toBe(529);
    expect(res.headers.get('x-should-retry')).toBe('true');
    const body = await res.json();
    expect(body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: res.headers.get('request-id') });
  });

  it('429 rate_limit_error; quota variant carries details.error_code enforced_spend_limit_reached', async () => {
    play({ kind: 'status', status: 429, headers: { 'retry-after': '3' } }, { kind: 'status', status: 429, variant: 'quota' });
    const a = await call(sim, 'anthropic');
    expect(a.headers.get('retry-after')).toBe('3');
    expect((await a.json()).error.type).toBe('rate_limit_error');
    const b = await (await call(sim, 'anthropic')).json();
    expect(b.error.details).toEqual({ error_code: 'enforced_spend_limit_reached' });
  });

  it('400 for malformed JSON, missing max_tokens or missing anthropic-version', async () => {
    const url = sim.baseUrl('anthropic') + '/messages';
    const bad = await fetch(url, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: 'nope' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.type).toBe('invalid_request_error');
    const noMax = await fetch(url, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'claude', messages: [] }) });
    expect((await noMax.json()).error.message).toContain('max_tokens');
    const noVersion = await fetch(url, { method: 'POST', body: JSON.stringify({ model: 'claude', max_tokens: 10, messages: [] }) });
    expect(noVersion.status).toBe(400);
    expect((await noVersion.json()).error.message).toContain('anthropic-version');
  });
});
