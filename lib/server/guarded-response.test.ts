// A body over the cap (DESIGN: Limits, "request body") gets one answer at both places that refuse it:
// the proxy, when its Content-Length says so, and the route's capped read, when it comes without one —
// 413 and the API's refusal `{error, code: "E_BODY"}`, as every refusal of POST /api/runs is shaped.
import { NextRequest } from 'next/server';
import { describe, expect, it } from 'vitest';
import { guardedResponse } from './guarded-response';
import { apiRefusal } from './api-refusal';
import { readBodyCapped } from './read-body';

const CAP = 1024 * 1024;
const ORIGIN = 'http://localhost:3000';
const TOO_LARGE = { error: `the body is larger than ${CAP} bytes (AQVEN_MAX_BODY_BYTES)`, code: 'E_BODY' };

/** A POST to /api/runs as a browser on the dashboard's own origin sends it. */
function post(headers: Record<string, string>, body?: ReadableStream<Uint8Array>): NextRequest {
  return new NextRequest(`${ORIGIN}/api/runs`, { method: 'POST', headers: { host: 'localhost:3000', origin: ORIGIN, ...headers }, body, duplex: 'half' } as ConstructorParameters<
    typeof NextRequest
  >[1]);
}

/** `bytes` bytes in pieces of 64 KiB, without a Content-Length (a chunked upload). */
function chunked(bytes: number): ReadableStream<Uint8Array> {
  let left = bytes;
  return new ReadableStream({
    pull(c) {
      if (left <= 0) return c.close();
      const n = Math.min(left, 64 * 1024);
      left -= n;
      c.enqueue(new Uint8Array(n).fill(120));
    },
  });
}

describe('a body over the cap: one refusal, declared or chunked', () => {
  it('the proxy answers a declared length over the cap as the API refuses: 413, {error, code: E_BODY}, JSON', async () => {
    const res = guardedResponse(post({ 'content-length': String(2 * CAP), 'content-type': 'application/json' }), {});
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(TOO_LARGE);
    // the security headers stay on the refusal
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it("the route's capped read refuses a body without a Content-Length in the same words and code", async () => {
    const read = await readBodyCapped(post({}, chunked(CAP + 1)), CAP);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    const res = apiRefusal(413, read.refusal);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(TOO_LARGE);
  });

  it('a foreign Origin is still one line of plain text (no route answers it)', async () => {
    const res = guardedResponse(post({ origin: 'http://evil.example', 'content-length': String(2 * CAP) }), {});
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/^refused: .*Origin.*\n$/);
  });
});

describe('apiRefusal', () => {
  it('carries the field only when it is about one, and Retry-After when given', async () => {
    const plain = apiRefusal(400, { code: 'E_FLOW', message: 'no flow' });
    expect(await plain.json()).toEqual({ error: 'no flow', code: 'E_FLOW' });
    expect(plain.headers.get('retry-after')).toBeNull();
    const both = apiRefusal(429, { code: 'E_LIMIT', message: 'wait' }, { field: 'input', retryAfterS: 7 });
    expect(await both.json()).toEqual({ error: 'wait', code: 'E_LIMIT', field: 'input' });
    expect(both.headers.get('retry-after')).toBe('7');
  });
});
