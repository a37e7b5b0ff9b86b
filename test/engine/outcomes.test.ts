// Four outcomes, decided before any parsing (DESIGN: Outcome classification; seed "Four outcomes,
// decided before any parsing"), over every wire protocol, streamed and not.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptStep } from '@/lib/sim/types';
import { ANTHROPIC, DIALECTS, GEMINI, harness, node, OPENAI, OPENROUTER, SCHEMA, type DialectCase } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const MODES = [
  { name: 'non-stream', stream: false },
  { name: 'stream', stream: true },
];

describe.each(DIALECTS)('$dialect', (c) => {
  describe.each(MODES)('$name', ({ stream }) => {
    it('finish_reason length with JSON that parses → truncated: never validated, never repaired; default fails with a hint naming output.on_truncated', async () => {
      h.script({ [c.modelId]: [{ kind: 'truncated', parses: true }, { kind: 'ok' }] });
      const res = await h.run(node([c.model], { outputSchema: SCHEMA, stream }));
      expect(h.requests(c.modelId)).toHaveLength(1);
      const a = res.attempts[0]!;
      // the cut-off text does parse as JSON…
      expect(() => JSON.parse(a.error!.detail!)).not.toThrow();
      // …and still it is truncated, with no validation and no repair
      expect(a).toMatchObject({ outcome: 'truncated', cause: 'truncated', action: 'none', validationErrors: [], responseText: null, discarded: true });
      expect(res.status).toBe('failed');
      // no fallback_models: "fallback" alone would fail aqven check, so the hint adds the model too
      expect(res.error).toMatchObject({
        code: 'truncated',
        hint: 'Set output.on_truncated to "retry", or add another model to fallback_models and set output.on_truncated to "fallback" in agents/classifier.yaml — see: aqven explain truncated',
      });
    });

    it('the provider ending the response with an error → error → retried by default', async () => {
      h.script({
        [c.modelId]: [
          { kind: 'provider_error', message: 'boom' },
          { kind: 'ok', text: 'fine' },
        ],
      });
      const res = await h.run(node([c.model], { stream }));
      expect(res.status).toBe('succeeded');
      expect(res.attempts.map((a) => [a.outcome, a.cause, a.action])).toEqual([
        ['error', 'provider_error', 'retry'],
        ['ok', null, 'none'],
      ]);
      expect(res.attempts[0]!.error?.kind).toBe('provider_error');
    });

    it('an unrecognised finish reason is ok: validated as usual, stored as sent, and noted', async () => {
      h.script({ [c.modelId]: [{ kind: 'ok', json: { queue: 'tech', confidence: 0.5 }, finish_reason: 'SOMETHING_NEW' }] });
      const res = await h.run(node([c.model], { stream, outputSchema: SCHEMA, policy: { onError: 'fail' } }));
      expect(res.status).toBe('succeeded');
      expect(res.output).toEqual({ queue: 'tech', confidence: 0.5 });
      expect(res.attempts[0]).toMatchObject({ outcome: 'ok', finishReason: 'SOMETHING_NEW', finishNote: 'unrecognised finish reason `SOMETHING_NEW`' });
    });

    it('an unrecognised finish reason on an answer that does not match the schema goes to repair, like any ok answer', async () => {
      h.script({ [c.modelId]: [{ kind: 'invalid', finish_reason: 'eos' }, { kind: 'ok' }] });
      const res = await h.run(node([c.model], { stream, outputSchema: SCHEMA }));
      expect(res.attempts.map((a) => [a.outcome, a.cause, a.action])).toEqual([
        ['ok', 'invalid_output', 'repair'],
        ['ok', null, 'none'],
      ]);
      expect(res.attempts[0]!.finishNote).toBe('unrecognised finish reason `eos`');
      expect(res.attempts[1]!.finishNote).toBeUndefined();
    });
  });

  it('a whole response with no finish reason is ok, noted', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'fine', finish_reason: null }] });
    const res = await h.run(node([c.model]));
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]).toMatchObject({ outcome: 'ok', finishReason: null, finishNote: 'no finish reason' });
  });

  it('a stream that ends without any finish reason did not complete: a transport failure, retried like a dropped connection', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'ok', text: 'partial ', finish_reason: null },
        { kind: 'ok', text: 'whole' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('whole');
    // one attempt, one answer: the broken try is the transport's
    expect(res.attempts).toHaveLength(1);
    const a = res.attempts[0]!;
    expect(a).toMatchObject({ outcome: 'ok', answerNo: 1, streamedText: 'whole', usageUnknown: true });
    expect(a.tries).toMatchObject([
      { tryNo: 1, status: 200, error: 'connection', discardedText: 'partial ' },
      { tryNo: 2, status: 200, error: null },
    ]);
  });

  it('a stream that never finishes, every try: the attempt ends error / transport, naming the missing finish reason', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'partial', finish_reason: null }] });
    const res = await h.run(node([c.model], { stream: true, policy: { onError: 'fail' } }), { providerOverrides: { transport: { maxAttempts: 2 } } });
    expect(res.attempts[0]!.tries).toHaveLength(2);
    expect(res.attempts[0]!.error).toMatchObject({ kind: 'transport' });
    const message = res.attempts[0]!.error!.message;
    expect(message.startsWith(`${c.model} did not complete the response: `)).toBe(true);
    expect(message).toMatch(
      /the stream ended without a (finish_reason|stop_reason|finishReason): the response did not complete; gave up after 2 tries \(transport\.max_attempts: 2\)$/,
    );
  });

  it('a mid-stream overload event is the call never completing: the transport retries it inside the attempt', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'stream_error', text: 'partial ' },
        { kind: 'ok', text: 'whole' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true }));
    expect(h.requests(c.modelId)).toHaveLength(2);
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('whole');
    expect(res.attempts).toHaveLength(1);
    const a = res.attempts[0]!;
    expect(a).toMatchObject({ outcome: 'ok', cause: null, action: 'none', answerNo: 1, streamedText: 'whole' });
    expect(a.tries).toMatchObject([
      { tryNo: 1, status: 200, error: 'server_error', discardedText: 'partial ' },
      { tryNo: 2, status: 200, error: null },
    ]);
  });

  it('a mid-stream rate-limit event pauses the model like a 429, and the transport retries after the wait', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'stream_error', variant: 'rate_limit', text: 'partial ' },
        { kind: 'ok', text: 'whole' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.status).toBe('succeeded');
    const a = res.attempts[0]!;
    expect(a.tries.map((t) => t.error)).toEqual(['rate_limited', null]);
    const pause = h.events.find((e) => e.type === 'rate_limit_pause');
    expect(pause).toMatchObject({ model: c.model, reason: `a rate-limit error event in the stream from ${c.model}` });
    // the second try waited out the pause at the gate (default_wait 1 s, ±20 % jitter)
    expect(a.tries[1]!.waitedMs).toBeGreaterThanOrEqual(800);
  });

  it('a mid-stream error event that reports a broken answer (a malformed call) stays outcome error → default retry', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'stream_error', variant: 'malformed_call', text: 'partial ' },
        { kind: 'ok', text: 'whole' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.outcome, a.cause, a.action])).toEqual([
      ['error', 'provider_error', 'retry'],
      ['ok', null, 'none'],
    ]);
    // not a transport failure: one try, the provider's own error
    expect(res.attempts[0]!.tries).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ discarded: true, streamedText: 'partial ' });
  });
});

const refusals: [string, DialectCase, ScriptStep, string][] = [
  ['OpenAI message.refusal', OPENAI, { kind: 'refusal', variant: 'refusal_field' }, 'stop'],
  ['OpenAI content_filter', OPENAI, { kind: 'refusal', variant: 'content_filter' }, 'content_filter'],
  ['OpenRouter content_filter', OPENROUTER, { kind: 'refusal', variant: 'content_filter' }, 'content_filter'],
  ['Anthropic stop_reason refusal', ANTHROPIC, { kind: 'refusal', variant: 'stop_reason' }, 'refusal'],
  ['Gemini SAFETY', GEMINI, { kind: 'refusal', variant: 'safety' }, 'SAFETY'],
  ['Gemini RECITATION', GEMINI, { kind: 'ok', finish_reason: 'RECITATION' }, 'RECITATION'],
  ['Gemini blocked prompt', GEMINI, { kind: 'refusal', variant: 'prompt_blocked' }, 'promptFeedback.blockReason: SAFETY'],
];

describe.each(MODES)('refusals ($name) → refusal → default fail', ({ stream }) => {
  it.each(refusals)('%s', async (_n, c, step, finishReason) => {
    h.script({ [c.modelId]: [step, { kind: 'ok' }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, stream }));
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome: 'refusal', finishReason, cause: 'refusal', action: 'none', validationErrors: [] });
    expect(res.status).toBe('failed');
    expect(res.error).toMatchObject({
      code: 'refusal',
      hint: 'Set output.on_refusal to "retry", or add another model to fallback_models and set output.on_refusal to "fallback" in agents/classifier.yaml — see: aqven explain refusal',
    });
  });
});

const errors: [string, DialectCase, ScriptStep, string | null][] = [
  ['Gemini MALFORMED_FUNCTION_CALL', GEMINI, { kind: 'provider_error', variant: 'malformed_function_call' }, 'MALFORMED_FUNCTION_CALL'],
  ['Gemini OTHER', GEMINI, { kind: 'provider_error', variant: 'other' }, 'OTHER'],
  ['OpenRouter finish_reason error', OPENROUTER, { kind: 'provider_error', variant: 'finish_error' }, 'error'],
  ['OpenRouter choice error inside a 200', OPENROUTER, { kind: 'provider_error', variant: 'choice_error' }, 'error'],
  ['Anthropic pause_turn', ANTHROPIC, { kind: 'provider_error' }, 'pause_turn'],
];

describe.each(MODES)('provider errors ($name) → error → default retry', ({ stream }) => {
  it.each(errors)('%s', async (_n, c, step, finishReason) => {
    h.script({ [c.modelId]: [step, { kind: 'ok', json: { queue: 'tech', confidence: 0.9 } }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, stream }));
    expect(res.attempts[0]).toMatchObject({ outcome: 'error', finishReason, cause: 'provider_error', action: 'retry', validationErrors: [] });
    expect(res.attempts[0]!.tries[0]!.status).toBe(200);
    expect(res.status).toBe('succeeded');
    expect(res.output).toEqual({ queue: 'tech', confidence: 0.9 });
  });
});

it('OpenRouter keeps the native finish reason beside the normalised one', async () => {
  h.script({ [OPENROUTER.modelId]: [{ kind: 'ok', text: 'x', native_finish_reason: 'end_turn' }] });
  const res = await h.run(node([OPENROUTER.model]));
  expect(res.attempts[0]).toMatchObject({ outcome: 'ok', finishReason: 'stop', nativeFinishReason: 'end_turn' });
});

it('OpenRouter native MAX_TOKENS is truncated', async () => {
  h.script({ [OPENROUTER.modelId]: [{ kind: 'ok', text: 'x', finish_reason: 'stop', native_finish_reason: 'MAX_TOKENS' }] });
  const res = await h.run(node([OPENROUTER.model]));
  expect(res.attempts[0]!.outcome).toBe('truncated');
});
