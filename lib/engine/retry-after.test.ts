import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter, parseRetryAfterMs, parseRetryInfo, serverWait } from './retry-after';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0); // Sun, 29 Nov 2026 12:00:00 GMT

const headers = (h: Record<string, string>) => new Headers(h);

describe('retry-after-ms', () => {
  it.each([
    ['1500', 1500],
    ['0', 0],
    [' 250 ', 250],
    ['12.3', 13], // rounded up: never earlier than asked
    ['-5', null],
    ['abc', null],
    ['', null],
    [null, null],
  ] as const)('%j → %j', (value, ms) => {
    expect(parseRetryAfterMs(value)).toBe(ms);
  });
});

describe('retry-after', () => {
  it.each([
    ['delta seconds', '2', 2000],
    ['zero', '0', 0],
    ['fractional seconds', '1.5', 1500],
    ['fraction rounded up to the ms', '0.0001', 1],
    ['leading dot', '.5', 500],
    ['surrounding whitespace', ' 3 ', 3000],
    ['negative is unparseable', '-1', null],
    ['units are unparseable', '2s', null],
    ['garbage', 'soon', null],
    ['empty', '', null],
    ['IMF-fixdate 30 s ahead', 'Sun, 29 Nov 2026 12:00:30 GMT', 30_000],
    ['IMF-fixdate in the past is 0', 'Fri, 31 Dec 1999 23:59:59 GMT', 0],
    ['IMF-fixdate exactly now is 0', 'Sun, 29 Nov 2026 12:00:00 GMT', 0],
    ['RFC 850 ahead', 'Sunday, 29-Nov-26 12:01:00 GMT', 60_000],
    ['RFC 850 in the past', 'Sunday, 06-Nov-94 08:49:37 GMT', 0],
    ['asctime ahead (space-padded day)', 'Tue Dec  1 12:00:00 2026', 2 * 86_400_000],
    ['asctime two-digit day', 'Sun Nov 29 12:00:05 2026', 5000],
    ['lowercase names', 'sun, 29 nov 2026 12:00:10 GMT', 10_000],
    ['date with no GMT', 'Sun, 29 Nov 2026 12:00:30', null],
    ['impossible date', 'Mon, 30 Feb 2026 12:00:00 GMT', null],
    ['hour out of range', 'Sun, 29 Nov 2026 25:00:00 GMT', null],
  ] as const)('%s: %j → %j', (_name, value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it('reads a two-digit RFC 850 year more than 50 years ahead as the previous century', () => {
    expect(parseHttpDate('Thursday, 01-Jan-99 00:00:00 GMT', NOW)).toBe(Date.UTC(1999, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-46 00:00:00 GMT', NOW)).toBe(Date.UTC(2046, 0, 1));
  });
});

describe('Gemini RetryInfo', () => {
  const body = (retryDelay: unknown, type = 'type.googleapis.com/google.rpc.RetryInfo') => ({
    error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }, { '@type': type, retryDelay }] },
  });
  it.each([
    ['34.4s', 34_400],
    ['2s', 2000],
    ['0s', 0],
    ['0.0005s', 1],
    ['34.4', null],
    ['-1s', null],
    ['soon', null],
  ] as const)('retryDelay %j → %j', (delay, ms) => {
    expect(parseRetryInfo(body(delay))).toBe(ms);
  });
  it('accepts the proto {seconds, nanos} form', () => {
    expect(parseRetryInfo(body({ seconds: '3', nanos: 500_000_000 }))).toBe(3500);
  });
  it('ignores other detail types and bodies without details', () => {
    expect(parseRetryInfo(body('5s', 'type.googleapis.com/google.rpc.ErrorInfo'))).toBeNull();
    expect(parseRetryInfo({ error: { message: 'x' } })).toBeNull();
    expect(parseRetryInfo('<html>')).toBeNull();
    expect(parseRetryInfo(null)).toBeNull();
  });
});

describe('precedence', () => {
  const gemini = { error: { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '9s' }] } };
  it('retry-after-ms wins over retry-after and RetryInfo', () => {
    expect(serverWait(headers({ 'retry-after-ms': '100', 'retry-after': '2' }), gemini, NOW)).toEqual({ ms: 100, source: 'retry-after-ms', sent: '100' });
  });
  it('an unparseable retry-after-ms falls through to retry-after', () => {
    expect(serverWait(headers({ 'retry-after-ms': 'x', 'retry-after': '2' }), gemini, NOW)).toEqual({ ms: 2000, source: 'retry-after', sent: '2' });
  });
  it('RetryInfo is used when no header is sent', () => {
    expect(serverWait(headers({}), gemini, NOW)).toEqual({ ms: 9000, source: 'retry-info', sent: '9s' });
  });
  it('keeps the value as sent, for the record of a pause', () => {
    const far = 'Fri, 31 Dec 9999 23:59:59 GMT';
    expect(serverWait(headers({ 'retry-after': ` ${far} ` }), {}, NOW)).toEqual({ ms: Date.UTC(9999, 11, 31, 23, 59, 59) - NOW, source: 'retry-after', sent: far });
    expect(serverWait(headers({}), { error: { details: [{ '@type': 'google.rpc.RetryInfo', retryDelay: { seconds: 3, nanos: 5e8 } }] } }, NOW)).toMatchObject({
      ms: 3500,
      sent: '3.5s',
    });
    expect(serverWait(headers({ 'retry-after': '9'.repeat(200) }), {}, NOW)!.sent).toHaveLength(80);
  });
  it('nothing given → null (default backoff)', () => {
    expect(serverWait(headers({ 'retry-after': '-3' }), {}, NOW)).toBeNull();
  });
});
