import { describe, expect, it } from 'vitest';
import { readBodyCapped } from './read-body';

/** A request whose body arrives in pieces without a Content-Length, as a chunked upload does. */
function chunked(pieces: string[], onCancel?: () => void): Request {
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < pieces.length) c.enqueue(enc.encode(pieces[i++]));
      else c.close();
    },
    cancel: onCancel,
  });
  return new Request('http://localhost/api/runs', { method: 'POST', body, duplex: 'half' } as RequestInit);
}

describe('readBodyCapped', () => {
  it('reads a body up to the cap, byte for byte', async () => {
    expect(await readBodyCapped(chunked(['{"a":', '"é"}']), 10)).toEqual({ ok: true, text: '{"a":"é"}' });
    expect(await readBodyCapped(new Request('http://localhost/', { method: 'POST' }), 10)).toEqual({ ok: true, text: '' });
  });

  it('refuses a chunked body once it passes the cap, and stops reading it', async () => {
    let cancelled = false;
    const got = await readBodyCapped(
      chunked(['12345', '67890', 'x', 'never read'], () => (cancelled = true)),
      10,
    );
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.refusal).toEqual({ code: 'E_BODY', field: 'form', message: 'the body is larger than 10 bytes (AQVEN_MAX_BODY_BYTES)' });
    expect(cancelled).toBe(true);
  });

  it('counts bytes, not characters', async () => {
    expect((await readBodyCapped(chunked(['éééééé']), 11)).ok).toBe(false); // 12 bytes
  });

  it('refuses a declared length over the cap without reading', async () => {
    const req = new Request('http://localhost/', { method: 'POST', body: 'x'.repeat(20), headers: { 'content-length': '20' } });
    expect((await readBodyCapped(req, 10)).ok).toBe(false);
  });
});
