// Chat Completions wire shapes (WIRE.md "openai"), plain OpenAI and OpenRouter, per script step.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { simCost, startSimulator, type ScriptStep, type SimServer } from './index';
import { createAjv } from '@/lib/shared/ajv';
import { call, jsonData, readSse, SCHEMA, type WireJson } from '@/test/helpers/sim-test-client';

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

/** The text of a streamed answer: concatenated delta.content (or delta.refusal). */
function streamed(chunks: WireJson[], field: 'content' | 'refusal' = 'content'): string {
  return chunks.map((c) => c.choices?.[0]?.delta?.[field] ?? '').join('');
}

describe('openai: ok', () => {
  it('non-stream: full chat.completion with usage; JSON from response_format validates', async () => {
    const res = await call(sim, 'openai', { schema: SCHEMA });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await res.json();
    expect(body).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', refusal: null } }] });
    expect(typeof body.id).toBe('string');
    expect(typeof body.created).toBe('number');
    expect(ajv.validate(SCHEMA, JSON.parse(body.choices[0].message.content))).toBe(true);
    const u = body.usage;
    expect(u.prompt_tokens).toBeGreaterThan(0);
    expect(u.completion_tokens).toBe(Math.ceil(body.choices[0].message.content.length / 4));
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    expect(u).not.toHaveProperty('cost');
  });

  it('strict:false prompting: the schema in the last user message is honoured', async () => {
    const body = await (await call(sim, 'openai', { schema: SCHEMA, carrier: 'prompt' })).json();
    expect(ajv.validate(SCHEMA, JSON.parse(body.choices[0].message.content))).toBe(true);
  });

  it('without a schema answers prose; text / json / usage in the step override', async () => {
    const prose = await (await call(sim, 'openai')).json();
    expect(prose.choices[0].message.content).toMatch(/^Lorem ipsum/);
    play({ kind: 'ok', text: 'hello there', usage: { input: 11, output: 22 } }, { kind: 'ok', json: { queue: 'sales' } });
    const a = await (await call(sim, 'openai', { schema: SCHEMA })).json();
    expect(a.choices[0].message.content).toBe('hello there');
    expect(a.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 22, total_tokens: 33 });
    const b = await (await call(sim, 'openai', { schema: SCHEMA })).json();
    expect(JSON.parse(b.choices[0].message.content)).toEqual({ queue: 'sales' });
  });

  it('stream with include_usage: role chunk, deltas, finish chunk, usage chunk with choices [], then [DONE]', async () => {
    const res = await call(sim, 'openai', { stream: true, schema: SCHEMA });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const { events } = await readSse(res);
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.filter((e) => e.data === '[DONE]')).toHaveLength(1);
    const chunks = jsonData(events);
    for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const finish = chunks.at(-2)!;
    expect(finish.choices[0].finish_reason).toBe('stop');
    expect(chunks.slice(0, -2).every((c) => c.choices[0].finish_reason === null && c.usage === null)).toBe(true);
    const text = streamed(chunks);
    expect(ajv.validate(SCHEMA, JSON.parse(text))).toBe(true);
    expect(last.usage.completion_tokens).toBe(Math.ceil(text.length / 4));
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
  });

  it('stream without include_usage has no usage chunk', async () => {
    const { events } = await readSse(await call(sim, 'openai', { stream: true, includeUsage: false }));
    const chunks = jsonData(events);
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(events.at(-1)!.data).toBe('[DONE]');
  });
});

describe('openrouter: ok', () => {
  it('non-stream: native_finish_reason and usage.cost from the fixed price', async () => {
    const res = await call(sim, 'openrouter', { schema: SCHEMA });
    expect(res.headers.get('x-generation-id')).toMatch(/^gen-/);
    const body = await res.json();
    expect(body.choices[0]).toMatchObject({ finish_reason: 'stop', native_finish_reason: 'stop' });
    expect(ajv.validate(SCHEMA, JSON.parse(body.choices[0].message.content))).toBe(true);
    expect(body.usage.cost).toBe(simCost(body.usage.prompt_tokens, body.usage.completion_tokens));
    expect(body.usage.cost).toBeGreaterThan(0);
  });

  it('stream: OPENROUTER PROCESSING comment, usage with cost even without include_usage, [DONE]', async () => {
    const { events, comments } = await readSse(await call(sim, 'openrouter', { stream: true, includeUsage: false }));
    expect(comments.map((c) => c.trim())).toContain('OPENROUTER PROCESSING');
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = jsonData(events);
    const usage = chunks.at(-1)!.usage;
    expect(usage.cost).toBe(simCost(usage.prompt_tokens, usage.completion_tokens));
    expect(chunks.at(-2)!.choices[0]).toMatchObject({ finish_reason: 'stop', native_finish_reason: 'stop' });
  });
});

describe.each(['openai', 'openrouter'] as const)('%s: failure steps', (dialect) => {
  it('invalid: JSON that fails the schema, finish_reason stop', async () => {
    for (const mode of ['missing_required', 'wrong_enum'] as const) {
      play({ kind: 'invalid', mode });
      const body = await (await call(sim, dialect, { schema: SCHEMA })).json();
      expect(body.choices[0].finish_reason).toBe('stop');
      expect(ajv.validate(SCHEMA, JSON.parse(body.choices[0].message.content))).toBe(false);
    }
    play({ kind: 'invalid', mode: 'not_json' });
    const body = await (await call(sim, dialect, { schema: SCHEMA })).json();
    expect(() => JSON.parse(body.choices[0].message.content)).toThrow();
  });

  it('truncated: finish_reason length, cut JSON; parses:true still parses', async () => {
    play({ kind: 'truncated' }, { kind: 'truncated', parses: true });
    const cut = await (await call(sim, dialect, { schema: SCHEMA })).json();
    expect(cut.choices[0].finish_reason).toBe('length');
    if (dialect === 'openrouter') expect(cut.choices[0].native_finish_reason).toBe('MAX_TOKENS');
    expect(() => JSON.parse(cut.choices[0].message.content)).toThrow();
    const parses = await (await call(sim, dialect, { schema: SCHEMA, stream: true })).text();
    const chunks = jsonData((await readSse(new Response(parses))).events);
    expect(chunks.find((c) => c.choices?.[0]?.finish_reason)!.choices[0].finish_reason).toBe('length');
    expect(() => JSON.parse(streamed(chunks))).not.toThrow();
  });

  it('stream_error: deltas then an error chunk, and no [DONE]', async () => {
    play({ kind: 'stream_error', message: 'Upstream overloaded' });
    const { events } = await readSse(await call(sim, dialect, { stream: true }));
    expect(events.some((e) => e.data === '[DONE]')).toBe(false);
    const chunks = jsonData(events);
    expect(streamed(chunks).length).toBeGreaterThan(0);
    const last = chunks.at(-1)!;
    expect(last.error.message).toBe('Upstream overloaded');
    if (dialect === 'openrouter') {
      expect(last).toMatchObject({ object: 'chat.completion.chunk', error: { code: 502, metadata: { error_type: expect.any(String) } } });
      expect(last.choices[0].finish_reason).toBe('error');
    } else {
      expect(last).toEqual({ error: { message: 'Upstream overloaded', type: 'server_error', param: null, code: null } });
    }
  });

  it('stream_error on a non-stream request is a provider_error', async () => {
    play({ kind: 'stream_error' });
    const body = await (await call(sim, dialect)).json();
    expect(body.choices[0].finish_reason).toBe('error');
    expect(body.choices[0].error).toBeDefined();
  });

  it('stream_error variants: rate_limit (a 429 / rate_limit_exceeded), malformed_call (a broken answer)', async () => {
    play({ kind: 'stream_error', variant: 'rate_limit' }, { kind: 'stream_error', variant: 'malformed_call' });
    const rl = jsonData((await readSse(await call(sim, dialect, { stream: true }))).events).at(-1)!;
    const mc = jsonData((await readSse(await call(sim, dialect, { stream: true }))).events).at(-1)!;
    if (dialect === 'openrouter') {
      expect(rl).toMatchObject({ error: { code: 429, metadata: { error_type: 'rate_limit_exceeded' } }, choices: [{ finish_reason: 'error' }] });
      expect(mc).toMatchObject({ error: { code: 502 }, choices: [{ finish_reason: 'error', native_finish_reason: 'MALFORMED_FUNCTION_CALL' }] });
    } else {
      expect(rl).toMatchObject({ error: { type: 'requests', code: 'rate_limit_exceeded' } });
      expect(mc).toMatchObject({ error: { code: 'invalid_tool_call' } });
    }
  });

  it('finish_reason: null sends none — a whole body with finish_reason null, a stream that ends without one', async () => {
    play({ kind: 'ok', text: 'hi', finish_reason: null });
    const body = await (await call(sim, dialect)).json();
    expect(body.choices[0].finish_reason).toBeNull();
    if (dialect === 'openrouter') expect(body.choices[0].native_finish_reason).toBeNull();
    const chunks = jsonData((await readSse(await call(sim, dialect, { stream: true }))).events);
    expect(chunks.every((c) => c.choices.length === 0 || c.choices[0].finish_reason === null)).toBe(true);
  });

  it('finish_reason override writes any value on the wire', async () => {
    play({ kind: 'ok', finish_reason: 'tool_calls', native_finish_reason: 'tool_use' });
    const body = await (await call(sim, dialect)).json();
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    if (dialect === 'openrouter') expect(body.choices[0].native_finish_reason).toBe('tool_use');
  });
});

describe('refusal', () => {
  it('openai default: finish_reason stop, content null, message.refusal; streamed as delta.refusal', async () => {
    play({ kind: 'refusal', text: 'I cannot email jane.doe@example.com about that.' });
    const body = await (await call(sim, 'openai')).json();
    expect(body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: null, refusal: 'I cannot email jane.doe@example.com about that.' } });
    const chunks = jsonData((await readSse(await call(sim, 'openai', { stream: true }))).events);
    expect(streamed(chunks, 'refusal')).toBe('I cannot email jane.doe@example.com about that.');
    expect(streamed(chunks, 'content')).toBe('');
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
  });

  it('content_filter variant (openrouter default)', async () => {
    play({ kind: 'refusal', variant: 'content_filter' });
    const a = await (await call(sim, 'openai')).json();
    expect(a.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { refusal: null } });
    play({ kind: 'refusal' });
    const b = await (await call(sim, 'openrouter')).json();
    expect(b.choices[0]).toMatchObject({ finish_reason: 'content_filter', native_finish_reason: 'content_filter' });
  });
});

describe('provider_error', () => {
  it('openrouter choice_error (default): 200, finish_reason error, choice-level error object', async () => {
    play({ kind: 'provider_error', message: 'upstream died' });
    const res = await call(sim, 'openrouter');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'error',
      native_finish_reason: 'error',
      error: { code: 502, message: 'upstream died', metadata: { error_type: expect.any(String) } },
    });
  });

  it('finish_error: finish_reason error without an error object; streamed with [DONE]', async () => {
    play({ kind: 'provider_error', variant: 'finish_error' });
    const body = await (await call(sim, 'openai')).json();
    expect(body.choices[0].finish_reason).toBe('error');
    expect(body.choices[0].error).toBeUndefined();
    const { events } = await readSse(await call(sim, 'openrouter', { stream: true }));
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(jsonData(events).at(-2)!.choices[0].finish_reason).toBe('error');
  });
});

describe('status', () => {
  it('429 rate limit: the OpenAI error body and the headers as given', async () => {
    play({ kind: 'status', status: 429, headers: { 'retry-after': '2', 'retry-after-ms': '1500', 'x-should-retry': 'true' } });
    const res = await call(sim, 'openai');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('retry-after-ms')).toBe('1500');
    expect(res.headers.get('x-should-retry')).toBe('true');
    const body = await res.json();
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error.code).toBe('rate_limit_exceeded');
  });

  it('quota 429: insufficient_quota; HTTP-date retry-after passes through', async () => {
    const date = new Date(Date.now() + 5000).toUTCString();
    play({ kind: 'status', status: 429, variant: 'quota', headers: { 'retry-after': date, 'x-should-retry': 'false' } });
    const res = await call(sim, 'openai');
    expect(res.headers.get('retry-after')).toBe(date);
    expect((await res.json()).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
  });

  it('5xx: server_error bodies; openrouter uses {error: {code, message}}', async () => {
    play({ kind: 'status', status: 503 });
    expect((await (await call(sim, 'openai')).json()).error.type).toBe('server_error');
    const res = await call(sim, 'openrouter');
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatchObject({ code: 503, message: expect.any(String) });
  });

  it('html variant: an HTML 502 page with text/html; a raw body is sent as given', async () => {
    play({ kind: 'status', status: 502, variant: 'html' }, { kind: 'status', status: 400, body: { error: { message: 'custom' } } });
    const res = await call(sim, 'openai');
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toContain('<title>502 Bad Gateway</title>');
    const custom = await call(sim, 'openai');
    expect(custom.status).toBe(400);
    expect(await custom.json()).toEqual({ error: { message: 'custom' } });
  });

  it('malformed JSON → 400 invalid_request_error; missing model → 400 with param', async () => {
    const res = await fetch(sim.baseUrl('openai') + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: null, code: null });
    const noModel = await fetch(sim.baseUrl('openai') + '/chat/completions', { method: 'POST', body: JSON.stringify({ messages: [] }) });
    expect(noModel.status).toBe(400);
    expect((await noModel.json()).error.param).toBe('model');
  });
});
