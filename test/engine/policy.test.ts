// Outcome policies, repair and budgets over the real simulator (DESIGN: Outcome policies, repair
// and budgets; seed "Two retries that happen automatically" and "What an agent does with an error,
// a refusal or a truncation").
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, harness, lastUserText, node, other, PRICE, SCHEMA, turns } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const VALID = { queue: 'billing', confidence: 0.8 };

describe.each(DIALECTS)('policy over $dialect', (c) => {
  const fb = other(c);

  it('schema mismatch then a valid answer: 2 answers, the second request carries the validation errors, node ok', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'invalid', mode: 'wrong_enum' },
        { kind: 'ok', json: VALID },
      ],
    });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA }));
    expect(res.status).toBe('succeeded');
    expect(res.output).toEqual(VALID);
    expect(res.attempts.map((a) => [a.outcome, a.cause, a.action, a.answerNo])).toEqual([
      ['ok', 'invalid_output', 'repair', 1],
      ['ok', null, 'none', 2],
    ]);
    const first = res.attempts[0]!;
    expect(first.validationErrors.length).toBeGreaterThan(0);
    expect(first.validationErrors[0]!.pointer).toBe('/queue');
    const [r1, r2] = h.requests(c.modelId);
    // the repair: the model's own answer as an assistant turn, then a NEW user message with the errors
    expect(turns(r2!)).toBe(turns(r1!) + 2);
    expect(lastUserText(r2!)).toContain('/queue: must be equal to one of the allowed values');
    expect(res.attempts[1]!.request.at(-2)).toEqual({ role: 'assistant', content: first.responseText });
  });

  it('retries: 1 and two invalid answers → invalid_output, with a hint about output.retries / strict', async () => {
    h.script({ [c.modelId]: [{ kind: 'invalid', mode: 'missing_required' }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA }));
    expect(h.requests(c.modelId)).toHaveLength(2);
    expect(res.status).toBe('failed');
    // every provider of the simulator has structured outputs, so strict: true would pass aqven check
    expect(res.error).toMatchObject({
      code: 'invalid_output',
      hint: 'Raise output.retries (now 1), or set output.strict: true in agents/classifier.yaml — see: aqven explain invalid_output',
    });
    expect(res.attempts.map((a) => a.action)).toEqual(['repair', 'none']);
  });

  it('on_error: fallback with retries: 3: the primary error goes straight to the fallback model, which has 4 answers of its own', async () => {
    h.script({
      [c.modelId]: [{ kind: 'provider_error' }],
      [fb.modelId]: [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid' }, { kind: 'ok', json: VALID }],
    });
    const res = await h.run(node([c.model, fb.model], { outputSchema: SCHEMA, policy: { retries: 3, onError: 'fallback' } }));
    expect(res.status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(1); // the primary's 3 retries were not spent
    expect(res.attempts.map((a) => [a.model, a.answerNo, a.action])).toEqual([
      [c.model, 1, 'fallback'],
      [fb.model, 1, 'repair'],
      [fb.model, 2, 'repair'],
      [fb.model, 3, 'repair'],
      [fb.model, 4, 'none'],
    ]);
    expect(res.budget).toEqual({
      retries: 3,
      models: [
        { model: c.model, answers: 1, limit: 4 },
        { model: fb.model, answers: 4, limit: 4 },
      ],
    });
    // the fallback got the node's original request
    expect(res.attempts[1]!.request).toEqual(res.attempts[0]!.request);
    expect(lastUserText(h.requests(fb.modelId)[0]!)).toBe(lastUserText(h.requests(c.modelId)[0]!));
  });

  it('on_error: fallback with no model left → the node fails', async () => {
    h.script({ [c.modelId]: [{ kind: 'provider_error' }], [fb.modelId]: [{ kind: 'provider_error' }] });
    const res = await h.run(node([c.model, fb.model], { policy: { retries: 3, onError: 'fallback' } }));
    expect(res.status).toBe('failed');
    expect(res.attempts.map((a) => [a.model, a.action])).toEqual([
      [c.model, 'fallback'],
      [fb.model, 'none'],
    ]);
    expect(res.error).toMatchObject({
      code: 'provider_error',
      hint: 'Add another model to fallback_models, or set output.on_error to "retry" in agents/classifier.yaml — see: aqven explain provider_error',
    });
  });

  it('on_error: retry, retries: 2, the model always errors → exactly 3 answers, then provider_error', async () => {
    h.script({ [c.modelId]: [{ kind: 'provider_error' }] });
    const res = await h.run(node([c.model], { policy: { retries: 2, onError: 'retry' } }));
    expect(h.requests(c.modelId)).toHaveLength(3);
    expect(res.attempts.map((a) => a.action)).toEqual(['retry', 'retry', 'none']);
    expect(res.status).toBe('failed');
    expect(res.error?.code).toBe('provider_error');
    expect(res.error?.hint).toBe(
      'Raise output.retries (now 2), or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml — see: aqven explain provider_error',
    );
  });

  it('the budget is shared: 1 repair + 1 error-retry with retries: 2 leaves 1 answer', async () => {
    h.script({ [c.modelId]: [{ kind: 'invalid' }, { kind: 'provider_error' }, { kind: 'provider_error' }, { kind: 'ok', json: VALID }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, policy: { retries: 2 } }));
    expect(res.attempts.map((a) => a.action)).toEqual(['repair', 'retry', 'none']);
    expect(h.requests(c.modelId)).toHaveLength(3);
    expect(res.status).toBe('failed');
    expect(res.budget.models[0]).toEqual({ model: c.model, answers: 3, limit: 3 });
  });

  it('a retry resends the same request: the dropped answer is not part of the conversation', async () => {
    h.script({ [c.modelId]: [{ kind: 'invalid' }, { kind: 'provider_error', text: 'DROPPED' }, { kind: 'ok', json: VALID }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, policy: { retries: 2 } }));
    expect(res.status).toBe('succeeded');
    const [, r2, r3] = h.requests(c.modelId);
    expect(r3!.body).toEqual(r2!.body);
    expect(JSON.stringify(r3!.body)).not.toContain('DROPPED');
    expect(res.attempts[2]!.request).toEqual(res.attempts[1]!.request);
  });

  it('tokens and cost of every dropped attempt count toward the node usage', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'provider_error', usage: { input: 100, output: 10 } },
        { kind: 'invalid', usage: { input: 200, output: 20 } },
        { kind: 'ok', json: VALID, usage: { input: 300, output: 30 } },
      ],
    });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, policy: { retries: 2 } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.usage.inputTokens, a.usage.outputTokens])).toEqual([
      [100, 10],
      [200, 20],
      [300, 30],
    ]);
    expect(res.usage.inputTokens).toBe(600);
    expect(res.usage.outputTokens).toBe(60);
    const perAttempt = res.attempts.map((a) => a.usage.costUsd);
    expect(perAttempt.every((x) => x > 0)).toBe(true);
    expect(res.usage.costUsd).toBeCloseTo(
      perAttempt.reduce((s, x) => s + x, 0),
      12,
    );
    if (c.dialect === 'openrouter') {
      // OpenRouter sends usage.cost: the simulator prices at 0.5 / 1.5 per Mtok, not our catalogue
      expect(res.attempts[0]!.usage.costUsd).toBeCloseTo((100 * 0.5 + 10 * 1.5) / 1e6, 12);
    } else {
      expect(res.attempts[0]!.usage.costUsd).toBeCloseTo((100 * PRICE.inputPerMtok + 10 * PRICE.outputPerMtok) / 1e6, 12);
    }
  });

  it('a client error under on_error: fallback goes to the next model', async () => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 404 }], [fb.modelId]: [{ kind: 'ok', text: 'there' }] });
    const res = await h.run(node([c.model, fb.model], { policy: { onError: 'fallback' } }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.error?.kind ?? null, a.action])).toEqual([
      ['client_error', 'fallback'],
      [null, 'none'],
    ]);
  });

  it('strict: true sends the schema through the structured-output field, not the prompt', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok' }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, policy: { strict: true } }));
    expect(res.status).toBe('succeeded');
    const [r] = h.requests(c.modelId);
    expect(lastUserText(r!)).not.toContain('JSON Schema');
    expect(JSON.stringify(r!.body)).toContain('"confidence"');
  });
});

describe('events', () => {
  it('attempt_end is awaited before the engine acts on the outcome', async () => {
    const c = DIALECTS[0]!;
    h.script({ [c.modelId]: [{ kind: 'provider_error' }, { kind: 'ok' }] });
    const log: string[] = [];
    await h.run(node([c.model]), {
      onEvent: async (e) => {
        if (e.type === 'attempt_end') {
          await new Promise((r) => setTimeout(r, 20));
          log.push(`end ${e.attempt.seq} committed`);
        } else if (e.type === 'attempt_start') log.push(`start ${e.seq} (sim has ${h.requests(c.modelId).length})`);
      },
    });
    expect(log).toEqual(['start 1 (sim has 0)', 'end 1 committed', 'start 2 (sim has 1)', 'end 2 committed']);
  });
});
