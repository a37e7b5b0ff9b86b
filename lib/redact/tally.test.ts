// The redactor's tally (tally.ts): one count per find replaced, whichever way the text is redacted —
// whole, streamed in chunks (a find split across two chunks is one), or with a caller's patterns
// (a find a pattern swallows is the pattern's, not its kind's).
import { describe, expect, it } from 'vitest';
import { createStreamRedactor, redact, redactText } from './index';
import { redactionCounts } from './tally';

/** How much each kind grew while `f` ran. */
function counted(f: () => void): Record<string, number> {
  const before = redactionCounts();
  f();
  const after = redactionCounts();
  return Object.fromEntries(Object.entries(after).map(([k, n]) => [k, n - before[k as keyof typeof before]]));
}

const TEXT = 'call +44 20 7946 0958 or mail anna@example.com (card 4111 1111 1111 1111)';

describe('the redaction tally', () => {
  it('counts each find once, by kind, for a whole text', () => {
    expect(counted(() => redact(TEXT))).toEqual({ email: 1, iban: 0, card: 1, phone: 1, ip: 0 });
  });

  it('counts a stream as the whole text, a find split across chunks once', () => {
    // longer than the held-back tail, so the redactor gives text out mid-stream, cutting between finds
    const long = `${'filler '.repeat(80)}${TEXT} `.repeat(4);
    const whole = counted(() => redact(long));
    expect(whole).toEqual({ email: 4, iban: 0, card: 4, phone: 4, ip: 0 });
    let out = '';
    const streamed = counted(() => {
      const r = createStreamRedactor();
      for (let i = 0; i < long.length; i += 7) {
        r.push(long.slice(i, i + 7));
        out += r.take();
      }
      out += r.end();
    });
    expect(out).toBe(redact(long));
    expect(streamed).toEqual(whole);
  });

  it("leaves a find a caller's pattern swallows to the pattern", () => {
    expect(counted(() => redactText('mail anna@example.com now', { extraPatterns: [/mail \S+/] }))).toEqual({ email: 0, iban: 0, card: 0, phone: 0, ip: 0 });
    expect(counted(() => redactText('mail anna@example.com now', { extraPatterns: [/now/] }))).toEqual({ email: 1, iban: 0, card: 0, phone: 0, ip: 0 });
  });
});
