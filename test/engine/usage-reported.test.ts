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
