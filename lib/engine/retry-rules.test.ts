import { describe, expect, it } from 'vitest';
import { classifyStatus } from './retry-rules';

describe('classifyStatus (DESIGN: Transport retry and rate limits)', () => {
  it.each([
    [408, 'timeout'],
    [409, 'server_error'],
    [429, 'rate_limited'],
    [500, 'server_error'],
    [502, 'server_error'],
    [503, 'server_error'],
    [504, 'server_error'],
    [529, 'server_error'],
  ] as const)('%i is transient (%s)', (status, error) => {
    expect(classifyStatus(status, null, false)).toEqual({ transient: true, error });
  });

  it.each([400, 401, 403, 404, 413, 422, 501])('%i is never retried', (status) => {
    expect(classifyStatus(status, null, false).transient).toBe(false);
  });

  it('a quota 429 is not transient', () => {
    expect(classifyStatus(429, null, true)).toEqual({ transient: false, error: 'rate_limited', whyNot: 'a quota or spend limit: waiting will not clear it, not retried' });
  });

  it.each([
    [503, 'false', false],
    [429, 'false', false],
    [400, 'true', true],
    [429, 'true', true], // overrides the quota verdict too
    [503, ' TRUE ', true],
    [400, 'maybe', false],
  ] as const)('x-should-retry overrides: %i with %j → transient %s', (status, header, transient) => {
    expect(classifyStatus(status, header, status === 429 && header === 'true').transient).toBe(transient);
  });

  it.each([
    [400, null, false, 'a client error: not retried'],
    [501, null, false, 'HTTP 501 is not a transient failure: not retried'],
    [503, 'false', false, 'x-should-retry: false: the server said not to retry'],
    [403, null, true, 'a quota or spend limit: waiting will not clear it, not retried'],
  ] as const)('%i (x-should-retry %j, quota %s) says why it is not retried', (status, header, quota, whyNot) => {
    expect(classifyStatus(status, header, quota)).toMatchObject({ transient: false, whyNot });
  });
});

describe('redirects (never followed: the key headers would go along)', () => {
  it.each([301, 302, 303, 307, 308])('%i is never retried, whatever x-should-retry says', (status) => {
    expect(classifyStatus(status, null, false)).toMatchObject({ transient: false, whyNot: 'a redirect: not followed, set base_url to the final URL' });
    expect(classifyStatus(status, 'true', false).transient).toBe(false);
  });
});
