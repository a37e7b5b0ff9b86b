// What a reply reports of its usage, over the simulator (DESIGN: Transport retry and rate limits,
// "Usage unknown, never zero"; WIRE.md per protocol): a complete answer without usage is unknown,
// never zero.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { harness, node, OPENAI, OPENROUTER } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

describe.each([OPENAI, OPENROUTER])('$dialect: a complete answer that reports no usage', (c) => {
  it.each([false, true])('stream %s: the attempt is usage unknown, not 0 tokens and $0', async (stream) => {
    // a compatible server that ignores stream_options.include_usage (or sends no usage at all)
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'fine', usage: { reported: false } }] });
    const res = await h.run(node([c.model], { stream }));
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]).toMatchObject({ outcome: 'ok', usageUnknown: true });
  });

  it('an answer that reports its usage is not unknown', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'fine', usage: { input: 10, output: 3 } }] });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.attempts[0]!.usageUnknown).toBeUndefined();
    expect(res.attempts[0]!.usage).toMatchObject({ inputTokens: 10, outputTokens: 3 });
  });
});

describe('reasoning tokens and the charged cost', () => {
  it.each([false, true])('xAI-style usage (stream %s): the reasoning left out of completion_tokens is billed output; cost_in_usd_ticks is the cost', async (stream) => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: '42', usage: { input: 12, output: 1, thoughts: 290, billing: 'xai' } }] });
    const res = await h.run(node([OPENAI.model], { stream }));
    const a = res.attempts[0]!;
    expect(a.usage.inputTokens).toBe(12);
    expect(a.usage.outputTokens).toBe(291);
    // the provider's charge (the simulator's price, 0.5 / 1.5 per Mtok), not the catalogue's 1 / 2
    expect(a.usage.costUsd).toBeCloseTo((12 * 0.5 + 291 * 1.5) / 1e6, 12);
  });

  it('OpenAI-style usage: reasoning inside completion_tokens is counted once', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: '42', usage: { input: 12, output: 1, thoughts: 290 } }] });
    const res = await h.run(node([OPENAI.model]));
    expect(res.attempts[0]!.usage).toMatchObject({ inputTokens: 12, outputTokens: 291 });
    expect(res.attempts[0]!.usage.costUsd).toBeCloseTo((12 * 1 + 291 * 2) / 1e6, 12); // the catalogue
  });
});

describe('the attempt says whose price its cost is, and its reasoning tokens', () => {
  it('the provider stated what it charged: costSource provider; reasoning tokens kept apart', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: '42', usage: { input: 12, output: 1, thoughts: 290, billing: 'xai' } }] });
    const a = (await h.run(node([OPENAI.model]))).attempts[0]!;
    expect(a).toMatchObject({ costSource: 'provider', reasoningTokens: 290 });
  });

  it('no cost on the wire: the catalogue prices it', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: '42', usage: { input: 12, output: 3 } }] });
    const a = (await h.run(node([OPENAI.model]))).attempts[0]!;
    expect(a.costSource).toBe('catalogue');
    expect(a.reasoningTokens).toBeUndefined();
  });

  it('a model the catalogue does not price, with no cost on the wire: its cost is unknown, not $0', async () => {
    h.script({ 'unpriced-model': [{ kind: 'ok', text: '42', usage: { input: 12, output: 3 } }] });
    const a = (await h.run(node(['openai:unpriced-model']))).attempts[0]!;
    expect(a.outcome).toBe('ok');
    expect(a.costSource).toBe('none');
  });
});
