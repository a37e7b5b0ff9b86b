// Gemini generateContent wire shapes (WIRE.md "gemini") per script step.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type ScriptStep, type SimServer } from './index';
import { createAjv } from '@/lib/shared/ajv';
import { call, jsonData, readSse, requestFor, SCHEMA, type WireJson } from '@/test/helpers/sim-test-client';

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

function text(chunks: WireJson[]): string {
  return chunks.map((c) => c.candidates?.[0]?.content?.parts?.map((p: { text: string }) => p.text).join('') ?? '').join('');
}

describe('gemini: ok', () => {
  it('non-stream: candidate, STOP, usageMetadata; model from the URL; schema from responseJsonSchema', async () => {
    const res = await call(sim, 'gemini', { schema: SCHEMA, model: 'gemini-2.5-flash-lite' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: expect.any(String) }] }, finishReason: 'STOP', index: 0 }],
      modelVersion: 'gemini-2.5-flash-lite',
      responseId: expect.any(String),
    });
    expect(body.promptFeedback).toBeUndefined();
    const out = body.candidates[0].content.parts[0].text;
    expect(ajv.validate(SCHEMA, JSON.parse(out))).toBe(true);
    const u = body.usageMetadata;
    expect(u.candidatesTokenCount).toBe(Math.ceil(out.length / 4));
    expect(u.thoughtsTokenCount).toBe(0);
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount);
    expect(sim.requests()[0].model).toBe('gemini-2.5-flash-lite');
  });

  it('strict:false prompting, and thoughts counted in the total', async () => {
    play({ kind: 'ok', usage: { input: 100, output: 20, thoughts: 30 } });
    const body = await (await call(sim, 'gemini', { schema: SCHEMA, carrier: 'prompt' })).json();
    expect(ajv.validate(SCHEMA, JSON.parse(body.candidates[0].content.parts[0].text))).toBe(true);
    expect(body.usageMetadata).toMatchObject({ promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 30, totalTokenCount: 150 });
  });

  it('stream (alt=sse): data events separated by CRLF CRLF, cumulative usage, last carries finishReason, no [DONE]', async () => {
    const res = await call(sim, 'gemini', { stream: true, schema: SCHEMA });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const raw = await res.text();
    expect(raw).toContain('\r\n\r\n');
    expect(raw).not.toContain('[DONE]');
    const { events } = await readSse(new Response(raw));
    expect(events.length).toBeGreaterThan(1);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    const chunks = jsonData(events);
    const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.candidates[0].finishReason).toBe('STOP');
    const out = text(chunks);
    expect(ajv.validate(SCHEMA, JSON.parse(out))).toBe(true);
    expect(last.usageMetadata.candidatesTokenCount).toBe(Math.ceil(out.length / 4));
    expect(last.usageMetadata.totalTokenCount).toBe(last.usageMetadata.promptTokenCount + last.usageMetadata.candidatesTokenCount);
  });

  it('streamGenerateContent without alt=sse answers a JSON array', async () => {
    const { body } = requestFor('gemini', {});
    const res = await fetch(`${sim.baseUrl('gemini')}/models/gemini-2.5-flash:streamGenerateContent`, { method: 'POST', body: JSON.stringify(body) });
    const arr = await res.json();
    expect(Array.isArray(arr)).toBe(true);
    expect(arr.at(-1).candidates[0].finishReason).toBe('STOP');
  });
});

describe('gemini: failure steps', () => {
  it('invalid (missing_required) fails the schema with STOP', async () => {
    play({ kind: 'invalid' });
    const body = await (await call(sim, 'gemini', { schema: SCHEMA })).json();
    expect(body.candidates[0].finishReason).toBe('STOP');
    expect(ajv.validate(SCHEMA, JSON.parse(body.candidates[0].content.parts[0].text))).toBe(false);
  });

  it('truncated: MAX_TOKENS; parses:true gives complete JSON', async () => {
    play({ kind: 'truncated', parses: true });
    const body = await (await call(sim, 'gemini', { schema: SCHEMA })).json();
    expect(body.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(() => JSON.parse(body.candidates[0].content.parts[0].text)).not.toThrow();
  });

  it('refusal: SAFETY with safetyRatings (default); prompt_blocked = 200 with promptFeedback and no candidates', async () => {
    play({ kind: 'refusal' }, { kind: 'refusal', variant: 'prompt_blocked' });
    const safety = await (await call(sim, 'gemini')).json();
    expect(safety.candidates[0].finishReason).toBe('SAFETY');
    expect(safety.candidates[0].safetyRatings.some((r: { blocked?: boolean }) => r.blocked)).toBe(true);
    const res = await call(sim, 'gemini', { stream: true });
    expect(res.status).toBe(200);
    const chunks = jsonData((await readSse(res)).events);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].candidates).toBeUndefined();
    expect(chunks[0].promptFeedback.blockReason).toBe('SAFETY');
  });

  it('provider_error: MALFORMED_FUNCTION_CALL by default, OTHER on request', async () => {
    play({ kind: 'provider_error' }, { kind: 'provider_error', variant: 'other' });
    expect((await (await call(sim, 'gemini')).json()).candidates[0].finishReason).toBe('MALFORMED_FUNCTION_CALL');
    const chunks = jsonData((await readSse(await call(sim, 'gemini', { stream: true }))).events);
    expect(chunks.at(-1)!.candidates[0].finishReason).toBe('OTHER');
  });

  it('stream_error: text chunks then an error object event', async () => {
    play({ kind: 'stream_error' });
    const chunks = jsonData((await readSse(await call(sim, 'gemini', { stream: true }))).events);
    expect(text(chunks).length).toBeGreaterThan(0);
    expect(chunks.at(-1)).toEqual({ error: { code: 503, message: expect.any(String), status: 'UNAVAILABLE' } });
  });

  it('stream_error variants: rate_limit → 429 RESOURCE_EXHAUSTED (no QuotaFailure), malformed_call → the last chunk says MALFORMED_FUNCTION_CALL', async () => {
    play({ kind: 'stream_error', variant: 'rate_limit' }, { kind: 'stream_error', variant: 'malformed_call' });
    const rl = jsonData((await readSse(await call(sim, 'gemini', { stream: true }))).events);
    expect(rl.at(-1)).toEqual({ error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' } });
    const mc = jsonData((await readSse(await call(sim, 'gemini', { stream: true }))).events);
    expect(mc.at(-1)!.candidates[0].finishReason).toBe('MALFORMED_FUNCTION_CALL');
  });

  it('finish_reason: null sends no finishReason at all', async () => {
    play({ kind: 'ok', finish_reason: null });
    expect((await (await call(sim, 'gemini')).json()).candidates[0].finishReason).toBeUndefined();
    const chunks = jsonData((await readSse(await call(sim, 'gemini', { stream: true }))).events);
    expect(chunks.every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
  });

  it('finish_reason override (RECITATION)', async () => {
    play({ kind: 'ok', finish_reason: 'RECITATION' });
    expect((await (await call(sim, 'gemini')).json()).candidates[0].finishReason).toBe('RECITATION');
  });
});

describe('gemini: status', () => {
  it('429 RESOURCE_EXHAUSTED; retry_info carries google.rpc.RetryInfo; quota has none', async () => {
    play({ kind: 'status', status: 429 }, { kind: 'status', status: 429, variant: 'retry_info', retryDelay: '34.4s' }, { kind: 'status', status: 429, variant: 'quota' });
    const plain = await call(sim, 'gemini');
    expect(plain.status).toBe(429);
    expect(plain.headers.get('retry-after')).toBeNull();
    expect((await plain.json()).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.any(String), details: [] });
    const retry = (await (await call(sim, 'gemini')).json()).error;
    expect(retry.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34.4s' });
    const quota = (await (await call(sim, 'gemini')).json()).error;
    expect(quota.status).toBe('RESOURCE_EXHAUSTED');
    expect(quota.details.some((d: Record<string, string>) => d['@type'].endsWith('RetryInfo'))).toBe(false);
    expect(quota.details.some((d: Record<string, string>) => d['@type'].endsWith('QuotaFailure'))).toBe(true);
  });

  it('503 UNAVAILABLE and malformed JSON 400 INVALID_ARGUMENT', async () => {
    play({ kind: 'status', status: 503 });
    expect((await (await call(sim, 'gemini')).json()).error).toMatchObject({ code: 503, status: 'UNAVAILABLE' });
    const bad = await fetch(`${sim.baseUrl('gemini')}/models/gemini-2.5-flash:generateContent`, { method: 'POST', body: '{' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });
});
