// Every row of the finish-reason table (docs/WIRE.md "Finish reasons"; lib/providers/finish-reasons.ts)
// over the wire: the simulator writes the value, the adapter reads it, the engine records the
// outcome — streamed and not, for every protocol. An unrecognised value is ok and noted.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Outcome } from '@/lib/engine/types';
import { ANTHROPIC_STOP, GEMINI_FINISH, NATIVE_DECIDES, OPENAI_FINISH } from '@/lib/providers/finish-reasons';
import { ANTHROPIC, GEMINI, harness, node, OPENAI, OPENROUTER, SCHEMA, type DialectCase } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const rows = (c: DialectCase, table: ReadonlyMap<string, Outcome>) => [...table].map(([value, outcome]) => [c.dialect, value, outcome, c] as const);
const TABLE = [
  ...rows(OPENAI, OPENAI_FINISH),
  ...rows(OPENROUTER, OPENAI_FINISH),
  ...rows(ANTHROPIC, ANTHROPIC_STOP),
  ...rows(GEMINI, GEMINI_FINISH),
  // an unrecognised value: nothing says otherwise, so ok
  ...[OPENAI, OPENROUTER, ANTHROPIC, GEMINI].map((c) => [c.dialect, 'eos', 'ok', c] as const),
];

// every bad outcome fails at once, so one answer shows the outcome the value means
const policy = { onError: 'fail', onRefusal: 'fail', onTruncated: 'fail' } as const;

describe.each([false, true])('stream: %s', (stream) => {
  it.each(TABLE)('%s %s → %s', async (_d, value, outcome, c) => {
    h.script({ [c.modelId]: [{ kind: 'ok', json: { queue: 'tech', confidence: 0.5 }, finish_reason: value }] });
    const res = await h.run(node([c.model], { stream, outputSchema: SCHEMA, policy }));
    expect(res.attempts).toHaveLength(1);
    expect(res.attempts[0]).toMatchObject({ outcome, finishReason: value });
    expect(res.attempts[0]!.finishNote ?? null).toBe(value === 'eos' ? 'unrecognised finish reason `eos`' : null);
    expect(res.status).toBe(outcome === 'ok' ? 'succeeded' : 'failed');
  });

  it.each([...NATIVE_DECIDES].filter(([v]) => v !== 'error'))('OpenRouter native_finish_reason %s behind finish_reason stop → %s', async (native, outcome) => {
    h.script({ [OPENROUTER.modelId]: [{ kind: 'ok', json: { queue: 'tech', confidence: 0.5 }, finish_reason: 'stop', native_finish_reason: native }] });
    const res = await h.run(node([OPENROUTER.model], { stream, outputSchema: SCHEMA, policy }));
    expect(res.attempts[0]).toMatchObject({ outcome, finishReason: 'stop', nativeFinishReason: native });
  });
});

describe('the values the issue names, by name', () => {
  it.each([
    ['Mistral model_length', OPENAI, 'model_length', 'truncated'],
    ['vLLM abort: the server gave up, an error, not an unknown', OPENAI, 'abort', 'error'],
    ['DeepSeek insufficient_system_resource: the server gave up for want of resources, an error', OPENAI, 'insufficient_system_resource', 'error'],
    ['Gemini LANGUAGE: the provider declined', GEMINI, 'LANGUAGE', 'refusal'],
    ['Vertex MODEL_ARMOR: the provider declined', GEMINI, 'MODEL_ARMOR', 'refusal'],
  ] as const)('%s', async (_n, c, value, outcome) => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'x', finish_reason: value }] });
    const res = await h.run(node([c.model], { policy }));
    expect(res.attempts[0]).toMatchObject({ outcome, finishReason: value });
  });

  it.each(['refusal', 'SAFETY', 'PROHIBITED_CONTENT', 'RECITATION'])('OpenRouter native %s decides refusal even when finish_reason is stop', async (native) => {
    h.script({ [OPENROUTER.modelId]: [{ kind: 'ok', text: 'x', finish_reason: 'stop', native_finish_reason: native }] });
    const res = await h.run(node([OPENROUTER.model]));
    expect(res.attempts[0]).toMatchObject({ outcome: 'refusal', cause: 'refusal' });
    expect(res.error?.code).toBe('refusal');
  });

  it('OpenRouter native MALFORMED_FUNCTION_CALL decides error even when finish_reason is stop', async () => {
    h.script({
      [OPENROUTER.modelId]: [
        { kind: 'ok', text: 'x', finish_reason: 'stop', native_finish_reason: 'MALFORMED_FUNCTION_CALL' },
        { kind: 'ok', text: 'y' },
      ],
    });
    const res = await h.run(node([OPENROUTER.model]));
    expect(res.attempts.map((a) => [a.outcome, a.action])).toEqual([
      ['error', 'retry'],
      ['ok', 'none'],
    ]);
  });
});
