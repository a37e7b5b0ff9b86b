// Gemini generateContent wire format (WIRE.md "gemini"). Streams use `\r\n\r\n` between events,
// as the real endpoint does; streamGenerateContent without alt=sse answers a JSON array.
import type { Answer } from './answer';
import { DEFAULT_PROVIDER_ERROR } from './answer';
import type { ErrorOptions, Frame, HttpReply, RenderCtx, Renderer } from './render-common';
import { chunkText, htmlPage, JSON_TYPE, jsonReply, pad, SSE_TYPE, tokensPerPiece } from './render-common';

const CHUNK_CHARS = 48; // Gemini streams bigger pieces than the other two
const SEP = '\r\n\r\n';

function finishReason(a: Answer): string | null {
  if (a.finishReason !== undefined) return a.finishReason;
  switch (a.finish) {
    case 'stop':
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'refusal':
      return 'SAFETY';
    case 'error':
      return a.error === 'other' ? 'OTHER' : 'MALFORMED_FUNCTION_CALL';
  }
}

const SAFETY_RATINGS = [
  { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
  { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
];

function usageMetadata(a: Answer, candidates: number, withCandidates = true): Record<string, unknown> {
  const u: Record<string, unknown> = { promptTokenCount: a.usage.input };
  if (withCandidates) u.candidatesTokenCount = candidates;
  u.totalTokenCount = a.usage.input + (withCandidates ? candidates + a.usage.thoughts : 0);
  if (withCandidates) u.thoughtsTokenCount = a.usage.thoughts;
  u.promptTokensDetails = [{ modality: 'TEXT', tokenCount: a.usage.input }];
  return u;
}

function responseId(ctx: RenderCtx): string {
  return `sim${pad(ctx.seq)}`;
}

function candidate(a: Answer, text: string | undefined, final: boolean): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  if (text !== undefined && text !== '') c.content = { parts: [{ text }], role: 'model' };
  if (final) {
    const fr = finishReason(a);
    if (fr !== null) c.finishReason = fr;
    if (a.finish === 'refusal') c.safetyRatings = SAFETY_RATINGS;
    if (a.finish === 'error' && c.finishReason === 'MALFORMED_FUNCTION_CALL') c.finishMessage = `Malformed function call: ${a.errorMessage ?? DEFAULT_PROVIDER_ERROR}`;
  }
  c.index = 0;
  return c;
}

function blocked(a: Answer, ctx: RenderCtx): Record<string, unknown> {
  return {
    promptFeedback: { blockReason: 'SAFETY', safetyRatings: SAFETY_RATINGS },
    usageMetadata: usageMetadata(a, 0, false),
    modelVersion: ctx.info.model,
    responseId: responseId(ctx),
  };
}

/** Response objects of a stream, cumulative usage in each; the last one carries finishReason. */
function chunks(a: Answer, ctx: RenderCtx, final: boolean): { obj: Record<string, unknown>; tokens: number }[] {
  if (a.refusal === 'prompt_blocked') return [{ obj: blocked(a, ctx), tokens: 0 }];
  const pieces = chunkText(a.text, CHUNK_CHARS);
  const toks = tokensPerPiece(pieces, a.usage.output);
  const out: { obj: Record<string, unknown>; tokens: number }[] = [];
  let sent = 0;
  const mk = (text: string | undefined, last: boolean, tokens: number) => {
    sent += tokens;
    out.push({
      obj: { candidates: [candidate(a, text, last)], usageMetadata: usageMetadata(a, sent), modelVersion: ctx.info.model, responseId: responseId(ctx) },
      tokens,
    });
  };
  pieces.forEach((p, i) => mk(p, final && i === pieces.length - 1, toks[i]));
  if (final && pieces.length === 0) mk(undefined, true, a.usage.output);
  return out;
}

function frame(obj: unknown, tokens: number, ctx: RenderCtx, index: number): Frame {
  if (!ctx.info.geminiArray) return { data: `data: ${JSON.stringify(obj)}${SEP}`, tokens };
  return { data: `${index === 0 ? '[' : ',\r\n'}${JSON.stringify(obj)}`, tokens };
}

const STATUS: Record<number, [string, string]> = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials.'],
  403: ['PERMISSION_DENIED', 'The caller does not have permission'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  408: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
  409: ['ABORTED', 'The operation was aborted.'],
  429: ['RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'],
  499: ['CANCELLED', 'The operation was cancelled.'],
  500: ['INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'],
  501: ['UNIMPLEMENTED', 'Method not found.'],
  503: ['UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
};

const QUOTA_MESSAGE =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';

export function geminiError(status: number, opts: ErrorOptions, ctx: RenderCtx): HttpReply {
  if (opts.variant === 'html') return htmlPage(status);
  const [code, message] = STATUS[status] ?? ['UNKNOWN', 'Unknown error.'];
  const details: unknown[] = [];
  let msg = opts.message ?? message;
  if (status === 429 && (opts.variant === 'quota' || opts.variant === 'retry_info' || opts.retryDelay !== undefined)) {
    msg = opts.message ?? QUOTA_MESSAGE;
    details.push(
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
            quotaDimensions: { location: 'global', model: ctx.info.model || 'unknown' },
            quotaValue: '10',
          },
        ],
      },
      { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
    );
    if (opts.variant !== 'quota') details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: opts.retryDelay ?? '2s' });
  }
  return jsonReply(status, { error: { code: status, message: msg, status: code, details } }, { 'content-type': `${JSON_TYPE}; charset=UTF-8` });
}

export const geminiRenderer: Renderer = {
  body(a, ctx) {
    const out =
      a.refusal === 'prompt_blocked'
        ? blocked(a, ctx)
        : {
            candidates: [candidate(a, a.text, true)],
            usageMetadata: usageMetadata(a, a.usage.output),
            modelVersion: ctx.info.model,
            responseId: responseId(ctx),
          };
    return jsonReply(200, out, { 'content-type': `${JSON_TYPE}; charset=UTF-8` });
  },
  streamHeaders(ctx) {
    return { 'content-type': ctx.info.geminiArray ? `${JSON_TYPE}; charset=UTF-8` : SSE_TYPE };
  },
  stream(a, ctx) {
    const frames = chunks(a, ctx, true).map((c, i) => frame(c.obj, c.tokens, ctx, i));
    if (ctx.info.geminiArray) frames.push({ data: ']', tokens: 0 });
    return frames;
  },
  streamError(a, ctx) {
    // a malformed call is how Gemini reports it: the last chunk's finishReason, no error event
    if (a.streamError === 'malformed_call') return geminiRenderer.stream(a, ctx);
    const body = chunks(a, ctx, false);
    const frames = body.map((c, i) => frame(c.obj, c.tokens, ctx, i));
    const err =
      a.streamError === 'rate_limit'
        ? { error: { code: 429, message: a.errorMessage ?? STATUS[429]![1], status: 'RESOURCE_EXHAUSTED' } }
        : { error: { code: 503, message: a.errorMessage ?? 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } };
    frames.push(frame(err, 0, ctx, frames.length));
    if (ctx.info.geminiArray) frames.push({ data: ']', tokens: 0 });
    return frames;
  },
  error: geminiError,
};
