// Streaming (DESIGN: Streaming) and the always-on redaction of failure text (DESIGN: Redaction;
// seed "What gets redacted, and when"), over the real simulator.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '@/lib/engine/types';
import { DIALECTS, harness, lastUserText, node, SCHEMA } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const LONG = 'The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun for a while.';
const deltas = (events: EngineEvent[]) => events.filter((e): e is Extract<EngineEvent, { type: 'delta' }> => e.type === 'delta');

describe.each(DIALECTS)('streaming over $dialect', (c) => {
  it('deltas arrive in order, between attempt_start and attempt_end, and add up to the output', async () => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: LONG }] });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.output).toBe(LONG);
    const ds = deltas(h.events);
    expect(ds.length).toBeGreaterThan(1);
    expect(ds.map((d) => d.text).join('')).toBe(LONG);
    const types = h.events.map((e) => e.type);
    expect(types[0]).toBe('attempt_start');
    expect(types.at(-1)).toBe('attempt_end');
    expect(types.lastIndexOf('delta')).toBeLessThan(types.indexOf('try_end'));
    expect(res.attempts[0]).toMatchObject({ discarded: false, streamedText: LONG, responseText: LONG });
    expect(h.requests(c.modelId)[0]!.stream).toBe(true);
  });

  it('a stream dropped mid-way is retried at transport level; the dropped text is discarded, the new text starts fresh', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'drop', when: 'mid_stream', text: LONG },
        { kind: 'ok', text: 'Second time lucky.' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true }));
    expect(res.status).toBe('succeeded');
    expect(h.requests(c.modelId)).toHaveLength(2);
    expect(res.attempts).toHaveLength(1); // one attempt, two tries
    const [t1, t2] = res.attempts[0]!.tries;
    expect(t1).toMatchObject({ tryNo: 1, status: 200, error: 'connection' });
    expect(t1!.discardedText!.length).toBeGreaterThan(0);
    expect(LONG.startsWith(t1!.discardedText!)).toBe(true);
    expect(t2).toMatchObject({ tryNo: 2, error: null });
    expect(t2!.discardedText).toBeUndefined();
    const ds = deltas(h.events);
    expect(
      ds
        .filter((d) => d.tryNo === 1)
        .map((d) => d.text)
        .join(''),
    ).toBe(t1!.discardedText);
    expect(
      ds
        .filter((d) => d.tryNo === 2)
        .map((d) => d.text)
        .join(''),
    ).toBe('Second time lucky.');
    expect(res.attempts[0]!.streamedText).toBe('Second time lucky.');
  });

  it('an attempt dropped by the policy has its streamed text marked discarded', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'truncated', text: 'Cut off mid' },
        { kind: 'ok', text: 'Whole answer.' },
      ],
    });
    const res = await h.run(node([c.model], { stream: true, policy: { onTruncated: 'retry' } }));
    expect(res.attempts.map((a) => [a.action, a.discarded, a.streamedText])).toEqual([
      ['retry', true, 'Cut off mid'],
      ['none', false, 'Whole answer.'],
    ]);
  });

  it('a failed attempt whose raw output contains anna@example.com has <EMAIL> in error.detail', async () => {
    const raw = 'Contact anna@example.com for the invoice.';
    h.script({ [c.modelId]: [{ kind: 'ok', text: raw }] });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA, stream: true, policy: { retries: 0 } }));
    expect(res.error?.code).toBe('invalid_output');
    const a = res.attempts[0]!;
    expect(a.error!.detail).toBe('Contact <EMAIL> for the invoice.');
    expect(a.streamedText).toBe('Contact <EMAIL> for the invoice.');
    expect(a.responseText).toBe('Contact <EMAIL> for the invoice.');
    // nowhere in what is stored or emitted at the end of the attempt
    const end = h.events.find((e) => e.type === 'attempt_end');
    expect(JSON.stringify(end)).not.toContain('anna@example.com');
  });

  it('a refusal whose text contains an email is stored redacted', async () => {
    h.script({ [c.modelId]: [{ kind: 'refusal', text: 'I will not email anna@example.com.' }] });
    const res = await h.run(node([c.model]));
    expect(res.attempts[0]!.error!.detail).toMatch(/<EMAIL>/);
    expect(JSON.stringify(res)).not.toContain('anna@example.com');
  });

  it('a repair quotes the failed answer to the model, but stores it redacted', async () => {
    h.script({
      [c.modelId]: [
        { kind: 'ok', text: 'mail anna@example.com' },
        { kind: 'ok', json: { queue: 'tech', confidence: 1 } },
      ],
    });
    const res = await h.run(node([c.model], { outputSchema: SCHEMA }));
    expect(res.status).toBe('succeeded');
    expect(JSON.stringify(h.requests(c.modelId)[1]!.body)).toContain('anna@example.com'); // the model sees its own answer
    expect(res.attempts[1]!.request.at(-2)).toEqual({ role: 'assistant', content: 'mail <EMAIL>' });
  });
});

describe('full redaction (opt-in)', () => {
  it('is off by default: the prompt goes out as written', async () => {
    const c = DIALECTS[0]!;
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'reply to anna@example.com' }] });
    const res = await h.run(node([c.model], { prompt: 'Ticket from anna@example.com' }));
    expect(lastUserText(h.requests(c.modelId)[0]!)).toContain('anna@example.com');
    expect(res.output).toBe('reply to anna@example.com');
  });

  it.each(DIALECTS)('redactFull redacts the outgoing prompt and the incoming response ($dialect)', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'ok', text: 'Reply to anna@example.com about ORDER-1234.' }] });
    const res = await h.run(node([c.model], { prompt: 'Ticket ORDER-99 from anna@example.com', system: 'Be brief.', stream: true }), {
      redactFull: { extraPatterns: [/ORDER-\d+/g] },
    });
    const sent = JSON.stringify(h.requests(c.modelId)[0]!.body);
    expect(sent).not.toContain('anna@example.com');
    expect(sent).not.toContain('ORDER-99');
    expect(res.output).toBe('Reply to <EMAIL> about <REDACTED>.');
    expect(res.attempts[0]!.request.at(-1)!.content).toBe('Ticket <REDACTED> from <EMAIL>');
    expect(
      deltas(h.events)
        .map((d) => d.text)
        .join(''),
    ).toBe('Reply to <EMAIL> about <REDACTED>.');
  });
});
