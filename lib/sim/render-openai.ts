// Chat Completions wire format (WIRE.md "openai"): plain OpenAI and OpenRouter's variant of it
// (native_finish_reason, usage.cost, choice-level errors, `: OPENROUTER PROCESSING` comments).
import type { Answer } from './answer';
import { DEFAULT_PROVIDER_ERROR } from './answer';
import type { ErrorOptions, Frame, HttpReply, RenderCtx, Renderer } from './render-common';
import { chunkText, dataFrame, htmlPage, JSON_TYPE, jsonReply, pad, SSE_TYPE, tokensPerPiece } from './render-common';

/** Fixed price of every simulated OpenRouter model (USD per 1M tokens), for `usage.cost`. */
export const SIM_PRICE = { inputPerMtok: 0.5, outputPerMtok: 1.5 } as const;

export function simCost(input: number, output: number): number {
  return Number(((input * SIM_PRICE.inputPerMtok + output * SIM_PRICE.outputPerMtok) / 1e6).toFixed(12));
}

const CHUNK_CHARS = 12; // a few tokens per delta, like the real streams

/**
 * The mid-stream error of each `stream_error` variant. `overload` and `rate_limit` report a
 * transient failure (a 5xx / 429 code, OpenAI's `server_error` / `rate_limit_exceeded`);
 * `malformed_call` a broken answer: OpenRouter's upstream MALFORMED_FUNCTION_CALL behind a 502,
 * and, for OpenAI, an error of the simulator's own wording with no status.
 */
const STREAM_ERRORS = {
  overload: {
    or: { code: 502, message: 'Provider returned error', errorType: 'provider_error', native: 'error' },
    openai: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  },
  rate_limit: {
    or: { code: 429, message: 'Rate limit exceeded', errorType: 'rate_limit_exceeded', native: 'error' },
    openai: { message: 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', code: 'rate_limit_exceeded' },
  },
  malformed_call: {
    or: { code: 502, message: 'Provider returned error', errorType: 'provider_error', native: 'MALFORMED_FUNCTION_CALL' },
    openai: { message: 'The model produced an invalid tool call.', type: 'invalid_response_error', code: 'invalid_tool_call' },
  },
} as const;

type Flavour = 'openai' | 'openrouter';

function upstream(model: string): string {
  const vendor = model.split('/')[0];
  const names: Record<string, string> = { openai: 'OpenAI', google: 'Google', anthropic: 'Anthropic', 'meta-llama': 'Meta', mistralai: 'Mistral' };
  return names[vendor] ?? 'Simulated';
}

function finishReason(a: Answer): string | null {
  if (a.finishReason !== undefined) return a.finishReason;
  switch (a.finish) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'refusal':
      return a.refusal === 'content_filter' ? 'content_filter' : 'stop'; // refusal_field: stop + message.refusal
    case 'error':
      return 'error';
  }
}

function nativeFinishReason(a: Answer): string | null {
  if (a.nativeFinishReason !== undefined) return a.nativeFinishReason;
  if (a.finishReason !== undefined) return a.finishReason;
  if (a.finish === 'length') return 'MAX_TOKENS';
  return finishReason(a);
}

function choiceError(a: Answer): Record<string, unknown> | undefined {
  if (a.finish !== 'error' || a.error !== 'choice_error') return undefined;
  return { code: 502, message: a.errorMessage ?? DEFAULT_PROVIDER_ERROR, metadata: { error_type: 'provider_error' } };
}

/** The reply's `usage`, or undefined for a step whose usage is not reported (`usage.reported: false`). */
function usage(flavour: Flavour, a: Answer): Record<string, unknown> | undefined {
  if (!a.usage.reported) return undefined;
  if (a.usage.billing === 'xai') {
    // xAI: completion_tokens leaves the reasoning out, total_tokens counts it, and all of it is billed
    const billed = a.usage.output + a.usage.thoughts;
    return {
      prompt_tokens: a.usage.input,
      completion_tokens: a.usage.output,
      total_tokens: a.usage.input + billed,
      prompt_tokens_details: { text_tokens: a.usage.input, audio_tokens: 0, image_tokens: 0, cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: a.usage.thoughts, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      num_sources_used: 0,
      cost_in_usd_ticks: Math.round(simCost(a.usage.input, billed) * 1e10),
    };
  }
  const completion = a.usage.output + a.usage.thoughts; // reasoning tokens are part of completion_tokens
  const base = {
    prompt_tokens: a.usage.input,
    completion_tokens: completion,
    total_tokens: a.usage.input + completion,
  };
  if (flavour === 'openrouter') {
    return {
      ...base,
      cost: simCost(a.usage.input, completion),
      is_byok: false,
      prompt_tokens_details: { cached_tokens: 0 },
      cost_details: { upstream_inference_cost: null },
      completion_tokens_details: { reasoning_tokens: a.usage.thoughts },
    };
  }
  return {
    ...base,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: a.usage.thoughts,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** How every generation id the simulator mints begins: no provider knows such an id. */
export const SIM_GENERATION_PREFIX = 'gen-sim-';

/**
 * The OpenRouter generation id of the answer to request `seq` of the simulator tagged `tag` (random
 * per simulator, new at each reset, so two never mint the same id): the `x-generation-id` header
 * and the body's `id`.
 */
export function simGenerationId(tag: string, seq: number): string {
  return `${simGenerationPrefix(tag)}${pad(seq)}`;
}

/** How the generation ids of the simulator tagged `tag` begin. */
export function simGenerationPrefix(tag: string): string {
  return `${SIM_GENERATION_PREFIX}${tag}-`;
}

function ids(flavour: Flavour, ctx: RenderCtx): { id: string; headers: Record<string, string> } {
  if (flavour === 'openrouter') {
    const id = simGenerationId(ctx.tag, ctx.seq);
    return { id, headers: { 'x-generation-id': id } };
  }
  return {
    id: `chatcmpl-sim${pad(ctx.seq)}`,
    headers: { 'x-request-id': `req_sim${pad(ctx.seq)}`, 'openai-processing-ms': '1', 'openai-version': '2020-10-01' },
  };
}

export function openaiRenderer(flavour: Flavour): Renderer {
  const or = flavour === 'openrouter';

  function body(a: Answer, ctx: RenderCtx): HttpReply {
    const { id, headers } = ids(flavour, ctx);
    const isRefusalField = a.finish === 'refusal' && a.refusal === 'refusal_field';
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: isRefusalField ? null : a.finish === 'refusal' || a.finish === 'error' ? a.text || null : a.text,
      refusal: isRefusalField ? a.text : null,
    };
    if (or) message.reasoning = null;
    else message.annotations = [];
    const choice: Record<string, unknown> = { index: 0, message, logprobs: null, finish_reason: finishReason(a) };
    if (or) choice.native_finish_reason = nativeFinishReason(a);
    const err = choiceError(a);
    if (err) choice.error = err;
    const out = or
      ? { id, provider: upstream(ctx.info.model), model: ctx.info.model, object: 'chat.completion', created: ctx.created, choices: [choice], usage: usage(flavour, a) }
      : {
          id,
          object: 'chat.completion',
          created: ctx.created,
          model: ctx.info.model,
          choices: [choice],
          usage: usage(flavour, a),
          service_tier: 'default',
          system_fingerprint: 'fp_sim',
        };
    return jsonReply(200, out, headers);
  }

  function chunkBase(ctx: RenderCtx): Record<string, unknown> {
    const { id } = ids(flavour, ctx);
    return or
      ? { id, provider: upstream(ctx.info.model), model: ctx.info.model, object: 'chat.completion.chunk', created: ctx.created }
      : { id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.info.model, service_tier: 'default', system_fingerprint: 'fp_sim' };
  }

  function chunk(ctx: RenderCtx, base: Record<string, unknown>, delta: Record<string, unknown>, finish: string | null, extra?: Record<string, unknown>): Record<string, unknown> {
    const choice: Record<string, unknown> = { index: 0, delta, logprobs: null, finish_reason: finish };
    if (or) choice.native_finish_reason = extra?.native ?? null;
    if (extra?.error) choice.error = extra.error;
    const c: Record<string, unknown> = { ...base, choices: [choice] };
    // OpenAI adds `usage: null` to every chunk when include_usage is on.
    if (!or && ctx.info.includeUsage) c.usage = null;
    return c;
  }

  /** The opening comment/role chunk and the content deltas of `a`. */
  function contentFrames(a: Answer, ctx: RenderCtx, base: Record<string, unknown>): Frame[] {
    const frames: Frame[] = [];
    if (or) frames.push({ data: ': OPENROUTER PROCESSING\n\n', tokens: 0 });
    const isRefusalField = a.finish === 'refusal' && a.refusal === 'refusal_field';
    const field = isRefusalField ? 'refusal' : 'content';
    const first = or ? { role: 'assistant', content: '' } : isRefusalField ? { role: 'assistant', content: null, refusal: '' } : { role: 'assistant', content: '', refusal: null };
    frames.push(dataFrame(chunk(ctx, base, first, null)));
    const pieces = chunkText(a.text, CHUNK_CHARS);
    const toks = tokensPerPiece(pieces, a.usage.output);
    pieces.forEach((p, i) => frames.push(dataFrame(chunk(ctx, base, { [field]: p }, null), toks[i])));
    return frames;
  }

  return {
    body,
    streamHeaders(ctx) {
      return { 'content-type': SSE_TYPE, 'cache-control': 'no-cache', ...ids(flavour, ctx).headers };
    },
    stream(a, ctx) {
      const base = chunkBase(ctx);
      const frames = contentFrames(a, ctx, base);
      const finalDelta = or ? { role: 'assistant', content: '' } : {};
      frames.push(dataFrame(chunk(ctx, base, finalDelta, finishReason(a), { native: nativeFinishReason(a), error: choiceError(a) })));
      const u = usage(flavour, a);
      if (ctx.info.includeUsage && u) frames.push(dataFrame({ ...base, choices: [], usage: u }));
      frames.push({ data: 'data: [DONE]\n\n', tokens: 0 });
      return frames;
    },
    earlyUsage(a, ctx) {
      const base = chunkBase(ctx);
      const frames = contentFrames(a, ctx, base);
      // OpenRouter sends usage on every stream; OpenAI only with stream_options.include_usage
      const u = usage(flavour, a);
      if ((or || ctx.info.includeUsage) && u) frames.splice(or ? 2 : 1, 0, dataFrame({ ...base, choices: [], usage: u }));
      return frames;
    },
    streamError(a, ctx) {
      const base = chunkBase(ctx);
      const frames = contentFrames(a, ctx, base);
      // OpenRouter: a chunk with a top-level error and finish_reason "error" (WIRE.md example);
      // OpenAI: a bare `{"error": {...}}` data event. Neither is followed by [DONE].
      const e = STREAM_ERRORS[a.streamError ?? 'overload'];
      frames.push(
        dataFrame(
          or
            ? {
                ...base,
                error: { code: e.or.code, message: a.errorMessage ?? e.or.message, metadata: { error_type: e.or.errorType } },
                choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: e.or.native }],
              }
            : { error: { message: a.errorMessage ?? e.openai.message, type: e.openai.type, param: null, code: e.openai.code } },
        ),
      );
      return frames;
    },
    error(status, opts, ctx) {
      if (opts.variant === 'html') return htmlPage(status);
      const { headers } = ids(flavour, ctx);
      delete headers['x-generation-id'];
      return or ? openrouterError(status, opts, ctx) : jsonReply(status, { error: openaiError(status, opts, ctx) }, headers);
    },
  };
}

function openaiError(status: number, opts: ErrorOptions, ctx: RenderCtx): Record<string, unknown> {
  const model = ctx.info.model || 'unknown';
  const e = (message: string, type: string, code: string | null) => ({ message: opts.message ?? message, type, param: opts.param ?? null, code });
  if (status === 429) {
    if (opts.variant === 'quota') {
      return e(
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
        'insufficient_quota',
        'insufficient_quota',
      );
    }
    return e(
      `Rate limit reached for ${model} in organization org-sim on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
      'requests',
      'rate_limit_exceeded',
    );
  }
  switch (status) {
    case 400:
      return e('Invalid request.', 'invalid_request_error', null);
    case 401:
      return e('Incorrect API key provided: sk-sim****. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key');
    case 403:
      return e('Country, region, or territory not supported', 'request_forbidden', 'unsupported_country_region_territory');
    case 404:
      return e(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
    case 500:
      return e('The server had an error while processing your request. Sorry about that!', 'server_error', null);
    case 503:
      return e('The server is overloaded or not ready yet.', 'server_error', null);
  }
  return status >= 500 ? e('The server had an error processing your request.', 'server_error', null) : e('Invalid request.', 'invalid_request_error', null);
}

function openrouterError(status: number, opts: ErrorOptions, ctx: RenderCtx): HttpReply {
  // OpenRouter's own shape: {error: {code: <the HTTP status>, message, metadata?}}.
  if (status === 429 && opts.variant === 'quota') {
    // An upstream quota error, forwarded with the provider's raw body (use status 402 for
    // OpenRouter's own "insufficient credits").
    const raw = { error: openaiError(429, { variant: 'quota' }, ctx) };
    return jsonReply(status, {
      error: { code: 429, message: opts.message ?? 'Provider returned error', metadata: { provider_name: upstream(ctx.info.model), raw: JSON.stringify(raw) } },
    });
  }
  const messages: Record<number, string> = {
    400: 'Invalid request.',
    401: 'No auth credentials found',
    402: 'Insufficient credits. Add more using https://openrouter.ai/settings/credits',
    403: 'Your chosen model requires moderation and your input was flagged',
    404: `No endpoints found for ${ctx.info.model || 'this model'}.`,
    408: 'Request timed out',
    429: `${ctx.info.model || 'The model'} is temporarily rate-limited upstream. Please retry shortly.`,
    502: 'Provider returned error',
    503: 'No available model provider that meets your routing requirements',
  };
  const message = opts.message ?? messages[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');
  return jsonReply(status, { error: { code: status, message } }, { 'content-type': JSON_TYPE });
}
