// Feeds literal SSE text through readSse and an adapter's accumulator (no HTTP involved): the
// adapters' stream tests.
import type { AdapterResult, ProviderAdapter } from '@/lib/engine/adapter';
import { readSse } from '@/lib/engine/sse';

export function textStream(pieces: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of pieces) controller.enqueue(enc.encode(p));
      controller.close();
    },
  });
}

export async function feed(adapter: ProviderAdapter, pieces: string[]): Promise<{ deltas: string[]; result: AdapterResult }> {
  const acc = adapter.createStream();
  const deltas: string[] = [];
  await readSse(textStream(pieces), (ev) => {
    const { delta, done } = acc.push(ev);
    if (delta) deltas.push(delta);
    return done;
  });
  return { deltas, result: acc.finish() };
}
