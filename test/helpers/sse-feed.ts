// Feeds literal SSE text through readSse and an adapter's accumulator (no HTTP involved): the
// adapters' stream tests.
import type { AdapterResult, ProviderAdapter, StreamBreak } from '@/lib/engine/adapter';
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

/**
 * `progress`: per event, whether it counted as content for transport.idle_timeout. `broken`: the
 * stream did not complete (the engine then fails the try and never asks for `result`).
 */
export async function feed(adapter: ProviderAdapter, pieces: string[]): Promise<{ deltas: string[]; result: AdapterResult; broken: StreamBreak | null; progress: boolean[] }> {
  const acc = adapter.createStream();
  const deltas: string[] = [];
  const progress: boolean[] = [];
  await readSse(textStream(pieces), (ev) => {
    const { delta, done, progress: p } = acc.push(ev);
    progress.push(p ?? (delta !== '' || done));
    if (delta) deltas.push(delta);
    return done;
  });
  return { deltas, result: acc.finish(), broken: acc.broken(), progress };
}
