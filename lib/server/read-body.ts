// Reads a request body with a byte cap (DESIGN: Limits), so a chunked request without a
// Content-Length cannot send more than the proxy's check of the declared length lets through.
import type { Refusal } from '@/lib/contracts/refusal';
import { bodyTooLarge } from '@/lib/contracts/request-body';
import { declaredTooLarge } from './request-guard';

export type CappedBody = { ok: true; text: string } | { ok: false; refusal: Refusal };

/** The body as UTF-8 text, or a refusal once more than `maxBytes` have arrived (the rest is cancelled). */
export async function readBodyCapped(req: Request, maxBytes: number): Promise<CappedBody> {
  const tooLarge: CappedBody = { ok: false, refusal: bodyTooLarge(maxBytes) };
  if (declaredTooLarge(req.headers.get('content-length'), maxBytes)) return tooLarge;
  if (!req.body) return { ok: true, text: '' };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge;
    }
    chunks.push(value);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}
