// Writes a planned response to the socket: first-token latency, token pacing, and the three ways
// a response can go wrong on the wire (the socket dropped mid-way, or a stall that never ends).
import type { ServerResponse } from 'node:http';
import type { Frame } from './render-common';
import type { Latency } from './types';

export interface Delivery {
  status: number;
  headers: Record<string, string>;
  frames: Frame[];
  /** ms to wait before each frame (same length as frames) */
  delays: number[];
  /** 'end' = complete response; 'drop' = destroy the socket after `keep` frames; 'stall' = go silent after `keep` frames */
  end: 'end' | 'drop' | 'stall';
  keep?: number;
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

export function deliver(res: ServerResponse, d: Delivery): void {
  const limit = d.end === 'end' ? d.frames.length : Math.min(d.keep ?? 0, d.frames.length);
  const due: number[] = [];
  let acc = 0;
  for (let i = 0; i < limit; i++) due.push((acc += d.delays[i] ?? 0));

  // Fast path: a complete response with no latency goes out in one write.
  if (d.end === 'end' && acc === 0) {
    res.writeHead(d.status, d.headers);
    res.end(d.frames.length === 1 ? d.frames[0].data : d.frames.map((f) => f.data).join(''));
    return;
  }

  const start = performance.now();
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  res.once('close', () => clearTimeout(timer));

  const destroy = () => res.socket?.destroy();
  const finish = () => {
    if (d.end === 'end') res.end();
    else if (d.end === 'drop' && limit === 0) destroy();
    else if (d.end === 'stall' && limit === 0) res.flushHeaders(); // headers out, then silence until someone closes
  };

  const tick = () => {
    timer = undefined;
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(d.status, d.headers);
    const elapsed = performance.now() - start;
    while (i < limit && due[i] <= elapsed + 0.5) {
      const data = d.frames[i++].data;
      // drop: destroy only once the kept bytes are on the wire, so the client sees a broken body
      if (i === limit && d.end === 'drop') res.write(data, destroy);
      else res.write(data);
    }
    if (i < limit) timer = setTimeout(tick, Math.max(0, due[i] - elapsed));
    else finish();
  };
  const firstWait = limit > 0 ? due[0] : acc;
  if (firstWait > 0) timer = setTimeout(tick, firstWait);
  else tick();
}
