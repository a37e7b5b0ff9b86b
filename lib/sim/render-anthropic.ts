// Anthropic Messages wire format (WIRE.md "anthropic").
//
// provider_error: Anthropic has no "200 with an error" shape. We answer a normal 200 message whose
// stop_reason is `pause_turn`: a real, documented value that DESIGN: "Outcome classification" classifies as `error`
// (until continuation exists), so the engine's on_error policy is exercised exactly as with the
// other dialects, streamed or not. An HTTP 500 `api_error` would instead be a transport failure
// (retried by the transport) — script that with `{kind: status, status: 500}`; a mid-stream
// `event: error` is `stream_error`.
import type { Answer } from './answer';
import type { ErrorOptions, Frame, HttpReply, RenderCtx, Renderer } from './render-common';
import { chunkText, eventFrame, htmlPage, jsonReply, pad, SSE_TYPE, tokensPerPiece } from './render-common';

const CHUNK_CHARS = 12;

/** The `event: error` of each `stream_error` variant; `malformed_call` is not transient (a broken answer). */
const STREAM_ERRORS = {
  overload: ['overloaded_error', 'Overloaded'],
  rate_limit: ['rate_limit_error', 'This request would exceed the rate limit for your organization. Please try again later.'],
  malformed_call: ['invalid_request_error', 'The model produced a malformed tool use block.'],
} as const;

function stopReason(a: Answer): string | null {
  if (a.finishReason !== undefined) return a.finishReason;
  switch (a.finish) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    case 'error':
      return 'pause_turn';
  }
}

function stopDetails(a: Answer): Record<string, unknown> | null {
  if (a.finish !== 'refusal') return null;
  return {
    type: 'refusal',
    category: 'cyber',
    explanation: 'This request was declined because it may violate the usage policy.',
  };
}

function usage(a: Answer, output: number): Record<string, unknown> {
  return {
    input_tokens: a.usage.input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  };
}

function requestId(ctx: RenderCtx): string {
  return `req_sim${pad(ctx.seq)}`;
}

function msgId(ctx: RenderCtx): string {
  return `msg_sim${pad(ctx.seq)}`;
}

function contentFrames(a: Answer, ctx: RenderCtx): Frame[] {
  const frames: Frame[] = [
    eventFrame('message_start', {
      type: 'message_start',
      message: {
        id: msgId(ctx),
        type: 'message',
        role: 'assistant',
        model: ctx.info.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(a, Math.min(1, a.usage.output)),
      },
    }),
    eventFrame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    eventFrame('ping', { type: 'ping' }),
  ];
  const pieces = chunkText(a.text, CHUNK_CHARS);
  const toks = tokensPerPiece(pieces, a.usage.output);
  pieces.forEach((p, i) => frames.push(eventFrame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: p } }, toks[i])));
  return frames;
}

const ERROR_TYPES: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'Not found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.'],
  500: ['api_error', 'Internal server error'],
  504: ['timeout_error', 'Request timed out'],
  529: ['overloaded_error', 'Overloaded'],
};

export function anthropicError(status: number, opts: ErrorOptions, ctx: RenderCtx): HttpReply {
  if (opts.variant === 'html') return htmlPage(status);
  const [type, message] = ERROR_TYPES[status] ?? (status >= 500 ? ['api_error', 'Internal server error'] : ['invalid_request_error', 'Invalid request.']);
  const error: Record<string, unknown> = { type, message: opts.message ?? message };
  if (opts.variant === 'quota') {
    error.message = opts.message ?? 'You have reached your specified workspace API usage limits. You will regain access on the first day of next month.';
    error.details = { error_code: 'enforced_spend_limit_reached' };
  }
  return jsonReply(status, { type: 'error', error, request_id: requestId(ctx) }, { 'request-id': requestId(ctx) });
}

export const anthropicRenderer: Renderer = {
  body(a, ctx) {
    const out = {
      id: msgId(ctx),
      type: 'message',
      role: 'assistant',
      model: ctx.info.model,
      content: a.text === '' ? [] : [{ type: 'text', text: a.text }],
      stop_reason: stopReason(a),
      stop_sequence: null,
      stop_details: stopDetails(a),
      usage: usage(a, a.usage.output),
    };
    return jsonReply(200, out, { 'request-id': requestId(ctx) });
  },
  streamHeaders(ctx) {
    return { 'content-type': SSE_TYPE, 'cache-control': 'no-cache', 'request-id': requestId(ctx) };
  },
  stream(a, ctx) {
    const frames = contentFrames(a, ctx);
    frames.push(
      eventFrame('content_block_stop', { type: 'content_block_stop', index: 0 }),
      eventFrame('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason(a), stop_sequence: null, stop_details: stopDetails(a) },
        usage: usage(a, a.usage.output),
      }),
      eventFrame('message_stop', { type: 'message_stop' }),
    );
    return frames;
  },
  streamError(a, ctx) {
    const frames = contentFrames(a, ctx);
    const [type, message] = STREAM_ERRORS[a.streamError ?? 'overload'];
    frames.push(eventFrame('error', { type: 'error', error: { type, message: a.errorMessage ?? message } }));
    return frames;
  },
  error: anthropicError,
};
