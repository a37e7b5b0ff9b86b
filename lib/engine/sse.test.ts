// The body readers' byte limits (sse.ts): counted after decompression, past the limit the body is
// cancelled — nothing more is pulled from the source.
import { describe, expect, it } from 'vitest';
import { readBodyText, readSse, ResponseTooLarge } from './sse';

/** An endless body of `chunk`-sized pieces; `pulled()` says how many were taken. */
function endless(piece: string) {
  const bytes = new TextEncoder().encode(piece);
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(bytes);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { body, pulled: () => pulled, cancelled: () => cancelled };
}

describe('readSse byte limit', () => {
  it('an endless stream of keep-alive comments stops at maxBytes: ResponseTooLarge, body cancelled', async () => {
    const src = endless(': keepalive\n\n'.repeat(100)); // 1300 bytes a piece
    await expect(readSse(src.body, () => false, { maxBytes: 10_000 })).rejects.toBeInstanceOf(ResponseTooLarge);
    expect(src.cancelled()).toBe(true);
    expect(src.pulled()).toBeLessThanOrEqual(10);
  });

  it('a stream within maxBytes is read whole', async () => {
    const events: string[] = [];
    const body = new Response('data: a\n\ndata: b\n\n').body!;
    await readSse(
      body,
      (ev) => {
        events.push(ev.data);
        return false;
      },
      { maxBytes: 18 },
    );
    expect(events).toEqual(['a', 'b']);
  });
});

describe('readBodyText byte limit', () => {
  it("'throw': past the limit, ResponseTooLarge and the body cancelled", async () => {
    const src = endless('x'.repeat(1000));
    await expect(readBodyText(src.body, 4096, 'throw')).rejects.toBeInstanceOf(ResponseTooLarge);
    expect(src.cancelled()).toBe(true);
  });

  it("'cut': the first maxBytes bytes, cut: true", async () => {
    const src = endless('0123456789');
    const r = await readBodyText(src.body, 25, 'cut');
    expect(r).toEqual({ text: '0123456789012345678901234', cut: true });
    expect(src.cancelled()).toBe(true);
  });

  it('a body within the limit: whole, cut: false; a multi-byte character cut at the limit decodes as U+FFFD', async () => {
    expect(await readBodyText(new Response('héllo').body, 100, 'cut')).toEqual({ text: 'héllo', cut: false });
    expect(await readBodyText(new Response('hé').body, 2, 'cut')).toEqual({ text: 'h\uFFFD', cut: true });
  });
});
