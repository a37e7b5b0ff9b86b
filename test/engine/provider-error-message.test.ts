// The message of a provider_error attempt says what happened once (DESIGN: The run record): the
// provider's own text followed by the finish reason, or the adapter's explanation — which names the
// finish reason itself — as it is; never "ended the response with an error" around a text that says so.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, harness, node } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

/** how often the message names a finish reason, whatever the protocol calls it */
const finishMentions = (text: string) => text.match(/finish reason|finish_reason|finishReason|stop_reason/g)?.length ?? 0;

describe.each(DIALECTS)('$dialect', (c) => {
  it('a provider error: the model, then what went wrong and the finish reason, each said once', async () => {
    h.script({ [c.modelId]: [{ kind: 'provider_error', message: 'The upstream model returned an error while generating the response.' }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }));
    const a = res.attempts[0]!;
    const m = a.error!.message;
    expect(a.error!.kind).toBe('provider_error');
    expect(m.startsWith(`${c.model}: `)).toBe(true);
    expect(finishMentions(m)).toBe(1);
    expect(m).not.toContain('ended the response with an error');
  });
});

describe('an error finish reason without an error object (openai protocol)', () => {
  it('is explained once, by the adapter, naming the finish reason', async () => {
    const c = DIALECTS.find((d) => d.dialect === 'openai')!;
    h.script({ [c.modelId]: [{ kind: 'provider_error', variant: 'finish_error' }] });
    const res = await h.run(node([c.model], { policy: { onError: 'fail' } }));
    const m = res.attempts[0]!.error!.message;
    expect(m).toBe(`${c.model}: the provider ended the response with finish_reason "error"`);
  });
});
