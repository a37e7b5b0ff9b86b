// Misread answers (issue 28), over the real simulator: what came back decides what an attempt is —
// an error object inside a 200, a refusal sent as an HTTP error, a finish value meaning the server
// gave up, a spent quota, a retry-after beyond max_wait — and the words say what came back.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, harness, node, OPENAI } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

describe('the words say what came back', () => {
  it.each(DIALECTS)('$dialect: a 429 on every try reads "answered 429 after 3 tries", not "could not be reached"', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }), { providerOverrides: { onRateLimit: { maxAttempts: 3 } } });
    const message = res.attempts[0]!.error!.message;
    expect(message).toMatch(new RegExp(`^${c.model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} answered 429 after 3 tries: HTTP 429`));
    expect(message).not.toContain('could not be reached');
  });

  it('a 500 on every try reads "answered 500 after 3 tries"; a connection refused still "could not be reached"', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 500 }] });
    const res = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }));
    expect(res.attempts[0]!.error!.message).toMatch(/^openai:gpt-4\.1-mini answered 500 after 3 tries: HTTP 500/);
    h.fresh();
    h.script({ [OPENAI.modelId]: [{ kind: 'drop' }] });
    const dropped = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }));
    expect(dropped.attempts[0]!.error!.message).toMatch(/^openai:gpt-4\.1-mini could not be reached: /);
  });
});
