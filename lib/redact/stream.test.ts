import { describe, expect, it } from 'vitest';
import { realisticText } from '../../bench/redact.bench';
import { capFailureText, createStreamRedactor, FAILURE_TEXT_MAX_CHARS, redact, STREAM_HOLD_CHARS, type StreamSecret } from './index';

/** Streams `text` in the given pieces, taking after every piece; returns each piece given out. */
function stream(pieces: string[], secrets: StreamSecret[] = []): string[] {
  const r = createStreamRedactor({ secrets });
  const out: string[] = [];
  for (const p of pieces) {
    r.push(p);
    out.push(r.take());
  }
  out.push(r.end());
  return out;
}

/** `text` cut at the given offsets. */
function cutAt(text: string, offsets: number[]): string[] {
  const pieces: string[] = [];
  let last = 0;
  for (const o of [...offsets].sort((a, b) => a - b)) {
    pieces.push(text.slice(last, o));
    last = o;
  }
  pieces.push(text.slice(last));
  return pieces;
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PII = [
  'anna@example.com',
  'GB82 WEST 1234 5698 7654 32',
  'DE89370400440532013000',
  '4111 1111 1111 1111',
  '378282246310005',
  '+44 20 7946 0958',
  '(415) 555-0132',
  '192.168.1.1',
  '2001:db8::8a2e:370:7334',
  'fe80::1%eth0',
  '192.168.000.001',
  'user@[10.0.0.1]',
  'user@[IPv6:2001:db8::1]',
];

describe('createStreamRedactor', () => {
  it.each(PII)('catches %s split across two chunks at every position, and gives out no piece of it', (value) => {
    const filler = 'Please write to us, or call. '.repeat(20);
    const text = `${filler}Reach me at ${value} today. ${filler}`;
    const start = text.indexOf(value);
    expect(redact(text)).not.toContain(value.slice(0, 6));
    for (let k = start; k <= start + value.length; k++) {
      // every piece given out is part of the whole-text redaction, which keeps no fragment of it
      expect(stream(cutAt(text, [k])).join('')).toBe(redact(text));
    }
  });

  it('holds back the longest thing a detector can match: an email of 64 + 1 + 253 characters, split anywhere', () => {
    const local = 'a'.repeat(64);
    const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(57)}.com`;
    expect(domain).toHaveLength(253);
    const email = `${local}@${domain}`;
    expect(redact(email)).toBe('<EMAIL>');
    const text = `From: ${email} (sent at noon) ${'and more words '.repeat(40)}`;
    expect(STREAM_HOLD_CHARS).toBeGreaterThanOrEqual(email.length);
    for (let k = 1; k < email.length + 10; k += 3) {
      const out = stream(cutAt(text, [k, k + 1, k + 50]));
      expect(out.join('')).toBe(redact(text));
      expect(out.join('')).not.toContain(local);
    }
  });

  it('gives the same text as redacting the whole, however the stream is cut (1 MB of realistic text)', () => {
    const text = realisticText(1 << 20, 7);
    const whole = redact(text);
    const rnd = seeded(11);
    for (const maxPiece of [3, 40, 700, 5000]) {
      const pieces: string[] = [];
      for (let i = 0; i < text.length;) {
        const n = 1 + Math.floor(rnd() * maxPiece);
        pieces.push(text.slice(i, i + n));
        i += n;
      }
      // take only now and then, as the engine does (per batch, not per token)
      const r = createStreamRedactor();
      let out = '';
      pieces.forEach((p, i) => {
        r.push(p);
        if (i % 7 === 0) out += r.take();
      });
      out += r.end();
      expect(out === whole, `pieces up to ${maxPiece} chars`).toBe(true);
    }
  });

  it('holds back a short stream entirely until it ends', () => {
    const r = createStreamRedactor();
    r.push('Mail anna@exa');
    expect(r.take()).toBe('');
    r.push('mple.com now');
    expect(r.take()).toBe('');
    expect(r.pending).toBe(25);
    expect(r.end()).toBe('Mail <EMAIL> now');
  });

  it('replaces a literal secret split across chunks before the detectors run', () => {
    const key = 'sk-live-0123456789abcdefABCDEF';
    const text = `${'x '.repeat(300)}the key is ${key} and mail anna@example.com ${'y '.repeat(300)}`;
    const at = text.indexOf(key);
    for (let k = at; k <= at + key.length; k++) {
      const out = stream(cutAt(text, [k, k + 2]), [{ value: key, placeholder: '<API_KEY>' }]).join('');
      expect(out).toBe(redact(text.split(key).join('<API_KEY>')));
      expect(out).not.toContain(key.slice(0, 12));
    }
  });

  it('never splits a surrogate pair between two pieces', () => {
    const text = '😀'.repeat(STREAM_HOLD_CHARS * 2);
    const r = createStreamRedactor();
    r.push(text.slice(0, STREAM_HOLD_CHARS * 2 + 1)); // ends inside a pair
    const first = r.take();
    r.push(text.slice(STREAM_HOLD_CHARS * 2 + 1));
    const rest = r.end();
    expect(first.length % 2).toBe(0);
    expect(first + rest).toBe(text);
  });
});

describe('capFailureText', () => {
  it('keeps text up to the bound as it is', () => {
    const t = 'x'.repeat(FAILURE_TEXT_MAX_CHARS);
    expect(capFailureText(t)).toBe(t);
  });

  it('cuts longer text to the bound with a visible marker saying how much is left out', () => {
    const t = 'y'.repeat(FAILURE_TEXT_MAX_CHARS * 3);
    const c = capFailureText(t);
    expect(c).toHaveLength(FAILURE_TEXT_MAX_CHARS);
    const m = /… \[truncated: (\d+) more characters\]$/.exec(c);
    expect(m).not.toBeNull();
    expect(c.length - m![0].length + Number(m![1])).toBe(t.length);
    expect(capFailureText(c)).toBe(c); // idempotent
  });

  it('never ends in half a surrogate pair', () => {
    const t = '😀'.repeat(FAILURE_TEXT_MAX_CHARS);
    const c = capFailureText(t);
    const kept = c.slice(0, c.indexOf('… [truncated'));
    expect(kept.length % 2).toBe(0);
    expect(c.length).toBeLessThanOrEqual(FAILURE_TEXT_MAX_CHARS);
  });
});
