import { describe, expect, it } from 'vitest';
import { scrubSecret, stripUrlCredentials } from './secrets';

const KEY = 'sk-ant-api03-ABCDEFGHIJKLMNOP'; // 29 characters

describe('scrubSecret', () => {
  it('scrubs the whole key before cutting, so the cut never keeps a prefix of it', () => {
    const text = `${'a'.repeat(190)}${KEY} tail`;
    const out = scrubSecret(text, KEY, { max: 200 });
    expect(out).toBe(`${'a'.repeat(190)}<API_KEY> …`); // 200 characters, then the cut mark
    expect(out).not.toContain(KEY.slice(0, 8));
  });

  it('a text already holding a prefix of the key (≥ 8 characters) at the cut ends in <API_KEY>', () => {
    const echoed = `key: ${KEY.slice(0, 20)}`; // a provider that cut the key itself
    expect(scrubSecret(`${echoed}${'z'.repeat(50)}`, KEY, { max: echoed.length })).toBe('key: <API_KEY>…');
    expect(scrubSecret(echoed, KEY, { cut: true })).toBe('key: <API_KEY>');
  });

  it('a prefix shorter than 8 characters at a cut is left (it names the key format, not the key)', () => {
    expect(scrubSecret('key: sk-ant', KEY, { cut: true })).toBe('key: sk-ant');
  });

  it('scrubs each of several keys, the longer first, and a prefix of any of them at a cut', () => {
    const OTHER = 'sk-or-v1-0123456789abcdef';
    expect(scrubSecret(`sent ${KEY}, held ${OTHER}`, [KEY, undefined, OTHER])).toBe('sent <API_KEY>, held <API_KEY>');
    // one key inside the other: the longer goes whole, not as the shorter plus a tail
    expect(scrubSecret(`x ${KEY}XYZ y`, [KEY, `${KEY}XYZ`])).toBe('x <API_KEY> y');
    expect(scrubSecret(`held ${OTHER.slice(0, 12)}`, [KEY, OTHER], { cut: true })).toBe('held <API_KEY>');
  });

  it('leaves text without the key alone, and does not look for keys under 4 characters', () => {
    expect(scrubSecret('nothing here', KEY)).toBe('nothing here');
    expect(scrubSecret('abc abc', 'abc')).toBe('abc abc');
  });

  it('does not split a surrogate pair at the cut', () => {
    expect(scrubSecret('ab😀cd', undefined, { max: 3 })).toBe('ab…');
  });
});

describe('stripUrlCredentials', () => {
  it('replaces the userinfo of every URL, and nothing else', () => {
    expect(stripUrlCredentials('Request cannot be constructed from a URL that includes credentials: https://user:s3cret@api.example.com/v1/chat')).toBe(
      'Request cannot be constructed from a URL that includes credentials: https://<credentials>@api.example.com/v1/chat',
    );
    expect(stripUrlCredentials('mail anna@example.com at https://example.com/a@b')).toBe('mail anna@example.com at https://example.com/a@b');
  });

  it('is linear on adversarial input', () => {
    const evil = 'a://'.repeat(50_000) + 'x'.repeat(100_000);
    const t = performance.now();
    stripUrlCredentials(evil);
    expect(performance.now() - t).toBeLessThan(2000);
  });
});
