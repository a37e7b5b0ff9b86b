// Writes a planned response to the socket: first-token latency, token pacing, and the ways a
// response can go wrong on the wire (the socket dropped mid-way, a stall that never ends, keep-alives
// that never end), optionally gzip-encoded and padded with generated whitespace (a large body, or
// with gzip a gzip bomb), written with backpressure so the simulator never holds it in memory.
import type { ServerResponse } from 'node:http';
import { createGzip, type Gzip } from 'node:zlib';
import type { Frame } from './render-common';
import type { Latency } from './types';

export interface Delivery {
  status: number;
  headers: Record<string, string>;
  frames: Frame[];
  /** ms to wait before each frame (same length as frames) */
  delays: number[];
  /**
   * 'end' = complete response; 'drop' = destroy the socket after `keep` frames; 'stall' = go silent
   * after `keep` frames; 'keepalive' = after `keep` frames, write `keepalive.data` every
   * `keepalive.everyMs` until the client goes
   */
  end: 'end' | 'drop' | 'stall' | 'keepalive';
  keep?: number;
  keepalive?: { data: string; everyMs: number };
  /** content-encoding: gzip (the body goes through zlib, flushed after every frame) */
  gzip?: boolean;
}

/** Delays for a stream: first_token_ms before the first frame, then tokens / tokens_per_s between frames. */
export function streamDelays(frames: Frame[], latency: Latency | undefined): number[] {
  const first = latency?.first_token_ms ?? 0;
  const tps = latency?.tokens_per_s ?? 0;
  return frames.map((f, i) => (i === 0 ? first : 0) + (tps > 0 && i > 0 ? (f.tokens / tps) * 1000 : 0));
}

/** Delay of a whole body: time to first token plus the time to generate every output token. */
export function bodyDelay(outputTokens: number, latency: Latency | undefined): number {
  const tps = latency?.tokens_per_s ?? 0;
  return (latency?.first_token_ms ?? 0) + (tps > 0 ? (outputTokens / tps) * 1000 : 0);
}

/** Runs `fn` after `ms` unless the response closes first (client gone, server closing). */
export function after(res: ServerResponse, ms: number, fn: () => void): void {
  if (ms <= 0) return fn();
  const timer = setTimeout(fn, ms);
  res.once('close', () => clearTimeout(timer));
}

const SPACES = Buffer.alloc(64 * 1024, 0x20);

/** Where the bytes go: the response itself, or a gzip stream piped into it. */
interface Sink {
  write(data: string | Buffer): Promise<void>;
  /** writes `data` and resolves once it has been handed on (to the socket, or to zlib) */
  writeThrough(data: string): Promise<void>;
  /** frame boundary: with gzip, flush so the client sees the frame now */
  flush(): Promise<void>;
  end(): void;
}

function openSink(res: ServerResponse, gzip: boolean, closed: () => boolean): Sink {
  const z: Gzip | null = gzip ? createGzip() : null;
  if (z) {
    z.pipe(res);
    res.once('close', () => z.destroy());
  }
  const target = z ?? res;
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        target.off('drain', done);
        res.off('close', done);
        resolve();
      };
      target.once('drain', done);
      res.once('close', done);
    });
  return {
    async write(data) {
      if (closed()) return;
      if (!target.write(data)) await drained();
    },
    writeThrough: (data) => (closed() ? Promise.resolve() : new Promise<void>((resolve) => void target.write(data, () => resolve()))),
    flush: () => (z && !closed() ? new Promise<void>((resolve) => z.flush(() => resolve())) : Promise.resolve()),
    end: () => target.end(),
  };
}

async function writeFrame(sink: Sink, f: Frame, closed: () => boolean, through = false): Promise<void> {
  if (f.pad) {
    if (f.pad.before) await sink.write(f.pad.before);
    for (let left = f.pad.spaces; left > 0 && !closed(); left -= SPACES.length) {
      await sink.write(left >= SPACES.length ? SPACES : SPACES.subarray(0, left));
    }
    if (f.pad.after) await sink.write(f.pad.after);
  }
  if (f.data) await (through ? sink.writeThrough(f.data) : sink.write(f.data));
}

export function deliver(res: ServerResponse, d: Delivery): void {
  const limit = d.end === 'end' ? d.frames.length : Math.min(d.keep ?? 0, d.frames.length);
  const due: number[] = [];
  let acc = 0;
  for (let i = 0; i < limit; i++) due.push((acc += d.delays[i] ?? 0));
  const headers = { ...d.headers };
  if (d.gzip) {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-length') delete headers[k];
    headers['content-encoding'] = 'gzip';
  }

  // Fast path: a complete plain response with no latency goes out in one write.
  if (d.end === 'end' && acc === 0 && !d.gzip && d.frames.every((f) => !f.pad)) {
    res.writeHead(d.status, headers);
    res.end(d.frames.length === 1 ? d.frames[0].data : d.frames.map((f) => f.data).join(''));
    return;
  }

  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  res.once('close', () => {
    closed = true;
    clearTimeout(timer);
  });
  const isClosed = () => closed || res.destroyed;
  const wait = (ms: number) => new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  const destroy = () => res.socket?.destroy();
  const start = performance.now();

  const run = async () => {
    const first = limit > 0 ? due[0] : 0;
    if (first > 0) await wait(first);
    if (isClosed()) return;
    res.writeHead(d.status, headers);
    const sink = openSink(res, d.gzip === true, isClosed);
    for (let i = 0; i < limit; i++) {
      const left = due[i] - (performance.now() - start);
      if (left > 0.5) {
        await sink.flush();
        await wait(left);
      }
      if (isClosed()) return;
      await writeFrame(sink, d.frames[i], isClosed, d.end === 'drop' && i === limit - 1);
    }
    await sink.flush();
    if (isClosed()) return;
    switch (d.end) {
      case 'end':
        return sink.end();
      case 'drop':
        // destroy only once the kept bytes are on the wire, so the client sees a broken body
        if (limit === 0) return destroy();
        return void setImmediate(destroy);
      case 'stall':
        return void res.flushHeaders(); // headers out, then silence until someone closes
      case 'keepalive': {
        res.flushHeaders();
        const ka = d.keepalive ?? { data: ' ', everyMs: 1000 };
        for (;;) {
          await wait(ka.everyMs);
          if (isClosed()) return;
          await sink.write(ka.data);
          await sink.flush();
        }
      }
    }
  };
  run().catch(() => destroy());
}
