// Pieces shared by the three wire renderers: frames, text chunking, HTML error pages.
import type { Answer } from './answer';
import type { RequestInfo } from './request-info';

/** One write to the socket. `tokens` = output tokens it carries (paces streams). */
export interface Frame {
  data: string;
  tokens: number;
  /** written before `data`: `before`, then `spaces` spaces (generated as sent), then `after` */
  pad?: { before: string; spaces: number; after: string };
}

export interface RenderCtx {
  info: RequestInfo;
  /** server-wide request number: makes ids unique and stable within a run */
  seq: number;
  /** the simulator's generation tag (Simulator.generationTag) */
  tag: string;
  /** unix seconds */
  created: number;
}

/** A complete HTTP response body with its status and headers. */
export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ErrorOptions {
  variant?: 'quota' | 'html' | 'retry_info';
  retryDelay?: string;
  message?: string;
  /** openai: the request parameter at fault (400s) */
  param?: string;
}

export interface Renderer {
  /** the 200 body of a complete (non-stream) answer */
  body(a: Answer, ctx: RenderCtx): HttpReply;
  /** headers of a 200 stream */
  streamHeaders(ctx: RenderCtx): Record<string, string>;
  /** every frame of a complete streamed answer, terminal frames included */
  stream(a: Answer, ctx: RenderCtx): Frame[];
  /** content frames of `a.text`, then the dialect's mid-stream error, and nothing after it */
  streamError(a: Answer, ctx: RenderCtx): Frame[];
  /** the dialect's error response for an HTTP status */
  error(status: number, opts: ErrorOptions, ctx: RenderCtx): HttpReply;
  /** what a stall with `early_usage` sends before its silence: the opening, an event carrying only the usage, then
   * `a.text`'s deltas. Absent where the first event carries the usage already (anthropic message_start, every
   * gemini chunk): the stall sends that first event */
  earlyUsage?(a: Answer, ctx: RenderCtx): Frame[];
}

export const JSON_TYPE = 'application/json';
export const SSE_TYPE = 'text/event-stream; charset=utf-8';

export function pad(seq: number): string {
  return String(seq).padStart(8, '0');
}

/** Splits text into pieces of about `size` chars without splitting a surrogate pair. */
export function chunkText(text: string, size: number): string[] {
  if (text.length <= size) return text === '' ? [] : [text];
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(i + size, text.length);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/**
 * Output tokens of each piece such that the running total ends exactly at `total` (the usage the
 * answer reports), so cumulative counts in streams agree with the final usage.
 */
export function tokensPerPiece(pieces: string[], total: number): number[] {
  const chars = pieces.reduce((n, p) => n + p.length, 0);
  const out: number[] = [];
  let sent = 0;
  let seen = 0;
  for (const p of pieces) {
    seen += p.length;
    const upTo = chars === 0 ? total : Math.round((total * seen) / chars);
    out.push(upTo - sent);
    sent = upTo;
  }
  return out;
}

export function dataFrame(obj: unknown, tokens = 0, sep = '\n\n'): Frame {
  return { data: `data: ${JSON.stringify(obj)}${sep}`, tokens };
}

export function eventFrame(event: string, obj: unknown, tokens = 0): Frame {
  return { data: `event: ${event}\ndata: ${JSON.stringify(obj)}\n\n`, tokens };
}

const REASON: Record<number, string> = {
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Time-out',
  520: 'Web server is returning an unknown error',
};

/** The kind of page a CDN or load balancer puts in front of an API when the origin fails. */
export function htmlPage(status: number): HttpReply {
  const title = `${status} ${REASON[status] ?? 'Error'}`;
  return {
    status,
    headers: { 'content-type': 'text/html' },
    body: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n`,
  };
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): HttpReply {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}
