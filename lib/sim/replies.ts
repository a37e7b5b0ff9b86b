// What a picked step sends (server.ts picks it): a scripted status, redirect or keep-alive; the
// answer as one body or as a stream, dropped, stalled or cut mid-stream; the step's padding and gzip.
// The bytes come from render-*.ts, the timing from deliver.ts.
import type { answerFor } from './answer';
import { bodyDelay, streamDelays, type Delivery } from './deliver';
import type { Frame, HttpReply, RenderCtx, Renderer } from './render-common';
import { JSON_TYPE } from './render-common';
import type { Latency, ScriptStep } from './types';

export function single(reply: HttpReply, delay: number, extraHeaders?: Record<string, string>): Delivery {
  return {
    status: reply.status,
    headers: { ...reply.headers, ...extraHeaders, 'content-length': String(Buffer.byteLength(reply.body)) },
    frames: [{ data: reply.body, tokens: 0 }],
    delays: [delay],
    end: 'end',
  };
}

/** Frames kept before a mid-stream drop: about half of the content deltas (at least one). */
function midStream(frames: Frame[]): number {
  const content = frames.reduce<number[]>((acc, f, i) => (f.tokens > 0 ? [...acc, i] : acc), []);
  if (content.length === 0) return Math.max(1, Math.floor(frames.length / 2));
  return content[Math.ceil(content.length / 2) - 1] + 1;
}

/** A scripted `status` reply: the given body, else the dialect's real error body for the status. */
export function statusReply(step: Extract<ScriptStep, { kind: 'status' }>, renderer: Renderer, ctx: RenderCtx): HttpReply {
  let reply: HttpReply;
  if (step.body === undefined) {
    reply = renderer.error(step.status, { variant: step.variant, retryDelay: step.retryDelay }, ctx);
  } else if (typeof step.body === 'string') {
    const looksJson = /^\s*[[{]/.test(step.body);
    const type = step.variant === 'html' ? 'text/html' : looksJson ? JSON_TYPE : 'text/plain; charset=utf-8';
    reply = { status: step.status, headers: { 'content-type': type }, body: step.body };
  } else {
    reply = { status: step.status, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(step.body) };
  }
  return { ...reply, status: step.status, headers: { ...reply.headers, ...(step.headers ?? {}) } };
}
/** A scripted `redirect`: the status (default 307) and its Location, with a short HTML body. */
export function redirectReply(step: Extract<ScriptStep, { kind: 'redirect' }>): HttpReply {
  const status = step.status ?? 307;
  const href = step.location.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return { status, headers: { 'content-type': 'text/html', location: step.location }, body: `<html><body>Moved: <a href="${href}">${href}</a></body></html>\n` };
}

/**
 * A scripted `keepalive`: headers, for streams the opening events and the deltas of `text`, then
 * keep-alives and never content — SSE comments, or `event: ping` for anthropic; a body request
 * gets a space now and then (leading whitespace of a JSON body that never comes).
 */
export function keepaliveDelivery(
  step: Extract<ScriptStep, { kind: 'keepalive' }>,
  answer: ReturnType<typeof answerFor>,
  renderer: Renderer,
  ctx: RenderCtx,
  latency: Latency | undefined,
  sse: boolean,
): Delivery {
  const everyMs = step.every_ms ?? 1000;
  if (!sse) {
    const headers = { 'content-type': JSON_TYPE };
    return { status: 200, headers, frames: [], delays: [], end: 'keepalive', keep: 0, keepalive: { data: ' ', everyMs } };
  }
  // the stream up to its end, without the end: streamError's frames minus the error event
  const frames = renderer.streamError(answer, ctx).slice(0, -1);
  const data = ctx.info.dialect === 'anthropic' ? 'event: ping\ndata: {"type": "ping"}\n\n' : ': keepalive\n\n';
  return { status: 200, headers: renderer.streamHeaders(ctx), frames, delays: streamDelays(frames, latency), end: 'keepalive', keep: frames.length, keepalive: { data, everyMs } };
}
/** The step's body options: `pad_bytes` of whitespace first (streams: one SSE comment line), `gzip`. */
export function bodyOptions(d: Delivery, step: ScriptStep | undefined, sse: boolean): Delivery {
  const spaces = step?.pad_bytes ?? 0;
  const out: Delivery = { ...d, headers: { ...d.headers } };
  if (spaces > 0) {
    const pad = sse ? { before: ':', spaces, after: '\n\n' } : { before: '', spaces, after: '' };
    const frames = out.frames.length > 0 ? out.frames : [{ data: '', tokens: 0 }];
    out.frames = [{ ...frames[0], pad }, ...frames.slice(1)];
    if (out.delays.length === 0) out.delays = [0];
    if (out.end !== 'end') out.keep = Math.max(1, out.keep ?? 0);
    const len = out.headers['content-length'];
    if (len !== undefined) out.headers['content-length'] = String(Number(len) + spaces + pad.before.length + pad.after.length);
  }
  if (step?.gzip) out.gzip = true;
  return out;
}

/** The answer's delivery: a stream (cut by stream_error, dropped mid-stream, or stalled) or one body (half of it dropped, or stalled). */
export function answerDelivery(step: ScriptStep | undefined, answer: ReturnType<typeof answerFor>, renderer: Renderer, ctx: RenderCtx, latency: Latency | undefined): Delivery {
  const stream = ctx.info.stream;
  if (step?.kind === 'stream_error' && stream) {
    const frames = renderer.streamError(answer, ctx);
    return { status: 200, headers: renderer.streamHeaders(ctx), frames, delays: streamDelays(frames, latency), end: 'end' };
  }

  if (stream) {
    const frames = renderer.stream(answer, ctx);
    const d: Delivery = { status: 200, headers: renderer.streamHeaders(ctx), frames, delays: streamDelays(frames, latency), end: 'end' };
    if (step?.kind === 'drop') Object.assign(d, { end: 'drop', keep: midStream(frames) });
    if (step?.kind === 'stall') {
      // early_usage: the opening, the usage and the text's deltas, then the silence
      const early = step.early_usage ? renderer.earlyUsage?.(answer, ctx) : undefined;
      const opened = early ?? frames;
      Object.assign(d, { frames: opened, delays: streamDelays(opened, latency), end: 'stall', keep: early ? early.length : 1 });
    }
    return d;
  }

  const reply = renderer.body(answer, ctx);
  const d = single(reply, bodyDelay(answer.usage.output, latency));
  if (step?.kind === 'drop') {
    // Headers promise the full length; half the body arrives, then the socket goes.
    const half = Math.max(1, Math.floor(reply.body.length / 2));
    Object.assign(d, { frames: [{ data: reply.body.slice(0, half), tokens: 0 }], end: 'drop', keep: 1 });
  }
  if (step?.kind === 'stall') Object.assign(d, { end: 'stall', keep: 0 });
  return d;
}
