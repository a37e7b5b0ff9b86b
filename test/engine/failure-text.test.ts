// No raw failure text at rest, every size bounded (DESIGN: Streaming, Redaction; seed "What gets
// redacted, and when"), over the real simulator: streamed deltas are given to the recorder
// redacted, validation errors quoting what the model wrote are redacted, and every stored failure
// text is capped at FAILURE_TEXT_MAX_CHARS with a visible marker.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STREAM_SCAN_CHARS } from '@/lib/engine/call-node';
import type { EngineEvent } from '@/lib/engine/types';
import { FAILURE_TEXT_MAX_CHARS, redact, STREAM_HOLD_CHARS } from '@/lib/redact';
import { DIALECTS, harness, lastUserText, node, OPENAI } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const deltas = (events: EngineEvent[]) => events.filter((e): e is Extract<EngineEvent, { type: 'delta' }> => e.type === 'delta');
const MARKER = /… \[truncated: \d+ more characters\]$/;

const KEY = 'sk-test-4f9a2c7e1b8d3a6f5e0c9b2a7d4e1f8c';
const RAW = ['anna@example.com', '4111 1111 1111 1111', '192.168.77.12', 'DE89 3704 0044 0532 0130 00', KEY];
const SECRET_TEXT = [
  'Dear customer, thank you for writing to us about the invoice. ',
  `You can reach the billing team at ${RAW[0]} any time. `,
  `The card ${RAW[1]} was declined; the request came from ${RAW[2]}. `,
  `Please pay to ${RAW[3]} instead. Your key is ${KEY}, keep it safe. `,
]
  .join('')
  .repeat(30);

describe.each(DIALECTS)('streamed deltas over $dialect', (c) => {
  it('carry, as `stored`, the text redacted (API key included) before anything is written, a tail held back', async () => {
    const env = { [`${c.provider.toUpperCase()}_API_KEY`]: KEY };
    h.script({ [c.modelId]: [{ kind: 'truncated', text: SECRET_TEXT }] });
    const res = await h.run(node([c.model], { stream: true }), { env });
    expect(res.attempts[0]).toMatchObject({ outcome: 'truncated', discarded: true });
    const ds = deltas(h.events);
    // the live view gets the raw text, split across many chunks (values cut in two included)
    expect(ds.map((d) => d.text).join('')).toBe(SECRET_TEXT);
    expect(ds.length).toBeGreaterThan(10);
    expect(SECRET_TEXT.length).toBeGreaterThan((STREAM_HOLD_CHARS + STREAM_SCAN_CHARS) * 1.5);
    // what may be stored: no raw value, and a prefix of the whole text redacted
    const stored = ds.map((d) => d.stored).join('');
    const whole = redact(SECRET_TEXT.split(KEY).join('<API_KEY>'));
    expect(stored.length).toBeGreaterThan(0);
    expect(whole.startsWith(stored)).toBe(true);
    expect(whole.length - stored.length).toBeGreaterThanOrEqual(0);
    for (const v of RAW) expect(stored).not.toContain(v);
    expect(stored).toContain('<EMAIL>');
    expect(stored).toContain('<API_KEY>');
    // the discarded attempt's whole text, as recorded
    expect(res.attempts[0]!.streamedText).toBe(whole);
  });
});

describe('streamed deltas', () => {
  it('store nothing while the text fits in the held-back tail', async () => {
    const text = 'Short answer for anna@example.com.';
    expect(text.length).toBeLessThan(STREAM_HOLD_CHARS);
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text }] });
    const res = await h.run(node([OPENAI.model], { stream: true }));
    expect(res.output).toBe(text);
    expect(
      deltas(h.events)
        .map((d) => d.stored)
        .join(''),
    ).toBe('');
    // an answer that becomes the node's output is stored raw, as the output is
    expect(res.attempts[0]!.streamedText).toBe(text);
  });
});

const SCORES = {
  type: 'object',
  properties: { scores: { type: 'object', additionalProperties: { type: 'number' } } },
  required: ['scores'],
  additionalProperties: false,
};
// keys the model wrote: Ajv quotes them in pointers and messages
const BAD = JSON.stringify({ scores: { 'anna@example.com': 'high' }, 'DE89 3704 0044 0532 0130 00': 1 });

describe('validation errors quoting what the model wrote', () => {
  it('are stored redacted — the issues, the message, the stored repair request — and sent to the model as they are', async () => {
    h.script({
      [OPENAI.modelId]: [
        { kind: 'ok', text: BAD },
        { kind: 'ok', json: { scores: { anna: 1 } } },
      ],
    });
    const res = await h.run(node([OPENAI.model], { outputSchema: SCORES }));
    expect(res.status).toBe('succeeded');
    const [first, second] = res.attempts;
    expect(first!.validationErrors).toEqual([
      { pointer: '', message: 'must NOT have additional properties: "<IBAN>"' },
      { pointer: '/scores/<EMAIL>', message: 'must be number' },
    ]);
    expect(first!.error!.message).toContain('/scores/<EMAIL> must be number');
    // the repair sends Ajv's words back to the model unredacted…
    const asked = lastUserText(h.requests(OPENAI.modelId)[1]!);
    expect(asked).toContain('/scores/anna@example.com');
    // …and stores them redacted
    expect(second!.request.at(-1)!.content).toContain('/scores/<EMAIL>');
    const stored = JSON.stringify(res.attempts);
    expect(stored).not.toContain('anna@example.com');
    expect(stored).not.toContain('DE89 3704');
  });

  it('a node that fails on them carries no raw value in its error', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: BAD }] });
    const res = await h.run(node([OPENAI.model], { outputSchema: SCORES, policy: { retries: 0 } }));
    expect(res.error?.code).toBe('invalid_output');
    expect(res.error!.message).toContain('<EMAIL>');
    expect(JSON.stringify(res)).not.toContain('anna@example.com');
  });

  it('are a bounded list: past FAILURE_TEXT_MAX_CHARS of them, one last issue says how many more', async () => {
    const n = 8000;
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: JSON.stringify(Array.from({ length: n }, () => 'x')) }] });
    const res = await h.run(node([OPENAI.model], { outputSchema: { type: 'array', items: { type: 'number' } }, policy: { retries: 0 } }));
    const issues = res.attempts[0]!.validationErrors;
    expect(issues.length).toBeLessThan(n);
    const size = issues.reduce((s, i) => s + i.pointer.length + i.message.length, 0);
    expect(size).toBeLessThanOrEqual(FAILURE_TEXT_MAX_CHARS + 100);
    expect(issues.at(-1)).toEqual({ pointer: '', message: `… [truncated: ${n - issues.length + 1} more errors]` });
  });
});

describe('stored failure text is capped', () => {
  const LONG = 'The answer goes on and on. '.repeat(Math.ceil((FAILURE_TEXT_MAX_CHARS * 1.5) / 27));

  it.each([false, true])('a cut-off answer longer than the cap (stream: %s): detail and discarded text end in the marker', async (stream) => {
    h.script({ [OPENAI.modelId]: [{ kind: 'truncated', text: LONG }] });
    const res = await h.run(node([OPENAI.model], { stream }));
    const a = res.attempts[0]!;
    expect(a.error!.detail!.length).toBe(FAILURE_TEXT_MAX_CHARS);
    expect(a.error!.detail).toMatch(MARKER);
    expect(LONG.startsWith(a.error!.detail!.replace(MARKER, ''))).toBe(true);
    if (stream) expect(a.streamedText).toBe(a.error!.detail);
  });

  it('a provider error message longer than the cap: the attempt and node messages are capped', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'provider_error', message: `boom ${'m'.repeat(FAILURE_TEXT_MAX_CHARS * 2)}` }] });
    const res = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }));
    expect(res.attempts[0]!.error!.message.length).toBeLessThanOrEqual(FAILURE_TEXT_MAX_CHARS);
    expect(res.attempts[0]!.error!.message).toMatch(MARKER);
    expect(res.error!.message.length).toBeLessThanOrEqual(FAILURE_TEXT_MAX_CHARS);
    expect(res.error!.message).toMatch(MARKER);
  });

  it('an answer that becomes the node output is never cut', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: LONG }] });
    const res = await h.run(node([OPENAI.model], { stream: true }));
    expect(res.output).toBe(LONG);
    expect(res.attempts[0]!.streamedText).toBe(LONG);
  });
});
