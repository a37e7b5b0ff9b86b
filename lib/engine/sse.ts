// Reads a text/event-stream body into events (eventsource-parser 3) for the transport. Comment
// lines (`: OPENROUTER PROCESSING`) are skipped by the parser; `\n\n`, `\r\n\r\n` and `\r\r` all end
// an event. A read that fails is a broken connection (DESIGN: Transport retry and rate limits) and
// is thrown as StreamReadError; an error thrown by `onEvent` is the caller's own and passes through.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export class StreamReadError extends Error {
  constructor(readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'StreamReadError';
  }
}

export interface ReadSseOptions {
  /** called after every chunk received: the per-chunk silence timer is reset here */
  onChunk?: () => void;
}

/**
 * Feeds the body to the parser and awaits `onEvent` for each event, in order. Stops when the body
 * ends or `onEvent` returns `true` (a terminal event: the rest is not read). Returns whether the
 * body ended by itself (false = stopped by a terminal event).
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: EventSourceMessage) => boolean | Promise<boolean>,
  opts: ReadSseOptions = {},
): Promise<boolean> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (ev) => void pending.push(ev) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let ended = false;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw new StreamReadError(err);
      }
      if (chunk.done) {
        ended = true;
        parser.feed(`${decoder.decode()}\n\n`); // an unterminated last event still counts
      } else {
        opts.onChunk?.();
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      while (pending.length) {
        if (await onEvent(pending.shift()!)) return false;
      }
      if (chunk.done) return true;
    }
  } finally {
    // a terminal event, a read error or a throwing handler: free the connection
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
