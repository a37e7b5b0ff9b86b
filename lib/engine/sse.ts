// Reads a text/event-stream body into events (eventsource-parser 3) for the transport. Comment
// lines (`: OPENROUTER PROCESSING`) are skipped by the parser; `\n\n`, `\r\n\r\n` and `\r\r` all end
// an event. A read that fails is a broken connection (DESIGN: Transport retry and rate limits) and
// is thrown as StreamReadError; an error thrown by `onEvent` is the caller's own and passes through.
// Every body is read under a byte limit (after decompression): past it, reading stops, the body is
// cancelled and ResponseTooLarge is thrown — a gzip bomb never inflates past the limit.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { WireBody } from './http-client';

export class StreamReadError extends Error {
  constructor(readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'StreamReadError';
  }
}

/** A body longer than the byte limit: reading stopped there and the rest was cancelled. */
export class ResponseTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the response is larger than ${limit} bytes`);
    this.name = 'ResponseTooLarge';
  }
}

export interface ReadSseOptions {
  /** called after every chunk received: the per-chunk silence timer is reset here */
  onChunk?: () => void;
  /** bytes read at most (after decompression); past it: ResponseTooLarge. Default: no limit */
  maxBytes?: number;
}

/** A body as the engine's HTTP client gives it (http-client.ts), or a fetch Response's stream. */
export type BodySource = WireBody | ReadableStream<Uint8Array>;

// duck-typed: a fetch handed in by a caller may come from another realm
const isWebStream = (b: BodySource): b is ReadableStream<Uint8Array> => 'getReader' in b;

/**
 * The chunks of a body, in order. A read that fails is thrown as StreamReadError; when the caller
 * stops early (a terminal event, the byte limit, a throwing handler) the body is cancelled, so the
 * connection is freed.
 */
async function* chunksOf(body: BodySource): AsyncGenerator<Uint8Array> {
  if (!isWebStream(body)) {
    let ended = false;
    try {
      for (;;) {
        let chunk: Uint8Array | null;
        try {
          chunk = await body.read();
        } catch (err) {
          throw new StreamReadError(err);
        }
        if (chunk === null) {
          ended = true;
          return;
        }
        yield chunk;
      }
    } finally {
      if (!ended) body.cancel();
    }
  }
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
        return;
      }
      yield chunk.value;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Stops reading a body that is not wanted, freeing its connection. */
export async function cancelBody(body: BodySource | null): Promise<void> {
  if (!body) return;
  if (isWebStream(body)) await body.cancel().catch(() => {});
  else body.cancel();
}

/**
 * Feeds the body to the parser and awaits `onEvent` for each event, in order. Stops when the body
 * ends or `onEvent` returns `true` (a terminal event: the rest is not read). Returns whether the
 * body ended by itself (false = stopped by a terminal event).
 */
export async function readSse(body: BodySource, onEvent: (ev: EventSourceMessage) => boolean | Promise<boolean>, opts: ReadSseOptions = {}): Promise<boolean> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (ev) => void pending.push(ev) });
  const decoder = new TextDecoder();
  const max = opts.maxBytes ?? Infinity;
  const deliver = async (): Promise<boolean> => {
    while (pending.length) if (await onEvent(pending.shift()!)) return true;
    return false;
  };
  let read = 0;
  for await (const chunk of chunksOf(body)) {
    read += chunk.byteLength;
    if (read > max) throw new ResponseTooLarge(max);
    opts.onChunk?.();
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (await deliver()) return false;
  }
  parser.feed(`${decoder.decode()}\n\n`); // an unterminated last event still counts
  return !(await deliver());
}

export interface BodyText {
  text: string;
  /** the body went past `maxBytes`: `text` is its first `maxBytes` bytes and the rest was cancelled */
  cut: boolean;
}

/**
 * Reads a whole body as UTF-8 text, at most `maxBytes` bytes (after decompression). `onLimit`:
 * 'throw' → ResponseTooLarge past the limit; 'cut' → the text read so far, `cut: true`. A read that
 * fails is thrown as StreamReadError.
 */
export async function readBodyText(body: BodySource | null, maxBytes: number, onLimit: 'throw' | 'cut'): Promise<BodyText> {
  if (!body) return { text: '', cut: false };
  const parts: Uint8Array[] = [];
  let read = 0;
  for await (const chunk of chunksOf(body)) {
    const room = maxBytes - read;
    if (chunk.byteLength > room) {
      if (onLimit === 'throw') throw new ResponseTooLarge(maxBytes);
      if (room > 0) parts.push(chunk.subarray(0, room));
      return { text: decode(parts, maxBytes), cut: true };
    }
    parts.push(chunk);
    read += chunk.byteLength;
  }
  return { text: decode(parts, read), cut: false };
}

function decode(parts: Uint8Array[], size: number): string {
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p.subarray(0, size - at), at);
    at += Math.min(p.byteLength, size - at);
  }
  // a character cut at the limit decodes as U+FFFD, not as an error
  return new TextDecoder().decode(all);
}
