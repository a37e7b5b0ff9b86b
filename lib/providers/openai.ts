// OpenAI Chat Completions and every compatible server, OpenRouter included (WIRE.md "openai").
import type { EventSourceMessage } from 'eventsource-parser';
import type { Outcome, ResolvedProvider } from '@/lib/engine/types';
import {
  tryJson,
  type AdapterRequest,
  type AdapterResult,
  type ProviderAdapter,
  type ReportedUsage,
  type StreamAccumulator,
  type StreamBreak,
  type WireRequest,
} from '@/lib/engine/adapter';
import { transientEventError } from '@/lib/engine/retry-rules';
import { NATIVE_DECIDES, OPENAI_FINISH, outcomeOf, unrecognisedNote } from './finish-reasons';
import { answeredBy, errorMessage, errorResult, eventBreak, isObj, isRefusalError, isSpentQuota, joinUrl, num, statusCode, str, unfinished } from './wire-helpers';

export interface OpenAISignals {
  /** a top-level, choice-level or chunk-level `error` object */
  error: unknown;
  refusal: string | null;
  finishReason: string | null;
  nativeFinishReason: string | null;
}

/** What an OpenRouter native value decides (WIRE.md "Finish reasons"); its generic `error` decides nothing more than `finish_reason`. */
function nativeOutcome(native: string | null): Outcome | null {
  return native === null || native === 'error' ? null : (NATIVE_DECIDES.get(native) ?? null);
}

/**
 * DESIGN: Outcome classification, openai row: error object → refusal signal → finish reason.
 * A non-ok `finish_reason` decides; else an OpenRouter `native_finish_reason` that means a refusal,
 * a truncation or an error does (native `SAFETY` behind `stop`); else the answer is ok — an
 * unrecognised or missing value included (the attempt then carries a note).
 */
export function classifyOpenAI(s: OpenAISignals): Outcome {
  if (s.error !== undefined && s.error !== null) return 'error';
  if (s.refusal !== null) return 'refusal';
  const byFinish = outcomeOf(OPENAI_FINISH, s.finishReason);
  if (byFinish !== null && byFinish !== 'ok') return byFinish;
  return nativeOutcome(s.nativeFinishReason) ?? 'ok';
}

/**
 * An error object that is no answer — a spent quota (`isSpentQuota`, the one rule), or a transient
 * failure: a numeric `code` such as 429 or 503, or OpenAI's words for a rate limit or a server
 * error — as the kind of try failure it is; null for any other error (a broken answer).
 */
export function transientError(err: unknown): StreamBreak['error'] | null {
  if (!isObj(err)) return null;
  if (isSpentQuota(err)) return 'quota';
  const status = statusCode(err.code) ?? statusCode(err.status);
  if (status !== null) return transientEventError(status, false);
  const words = [err.code, err.type, isObj(err.metadata) ? err.metadata.error_type : undefined];
  if (words.some((w) => w === 'rate_limit_exceeded' || w === 'rate_limit_error')) return 'rate_limited';
  if (words.some((w) => w === 'server_error' || w === 'overloaded_error' || w === 'service_unavailable')) return 'server_error';
  return null;
}

/** xAI states the charged cost in ticks: 1 USD = 1e10 ticks (docs.x.ai, "Cost Tracking"). */
const TICKS_PER_USD = 1e10;

/**
 * The usage of a reply (WIRE.md, openai "Usage"). Billed output: OpenAI counts reasoning inside
 * `completion_tokens`; xAI (and some compatible servers) leave it out, the sign being a
 * `total_tokens` that exceeds `prompt_tokens + completion_tokens` by the reasoning — then it is added.
 * The charged cost: OpenRouter's `cost` (USD), else xAI's `cost_in_usd_ticks`.
 */
function usageOf(u: unknown): ReportedUsage {
  if (!isObj(u)) return { inputTokens: 0, outputTokens: 0, costUsd: null };
  const input = num(u.prompt_tokens);
  const completion = num(u.completion_tokens);
  const details = isObj(u.completion_tokens_details) ? u.completion_tokens_details : null;
  const reasoning = details && typeof details.reasoning_tokens === 'number' && Number.isFinite(details.reasoning_tokens) ? details.reasoning_tokens : null;
  const outside = reasoning !== null && reasoning > 0 && num(u.total_tokens) >= input + completion + reasoning;
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const costUsd = finite(u.cost) ? u.cost : finite(u.cost_in_usd_ticks) ? u.cost_in_usd_ticks / TICKS_PER_USD : null;
  return {
    inputTokens: input,
    outputTokens: outside ? completion + reasoning : completion,
    ...(reasoning !== null && reasoning > 0 && { reasoningTokens: reasoning }),
    costUsd,
  };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const p of content) if (isObj(p) && typeof p.text === 'string') out += p.text;
  return out;
}

/** A delta with a refusal, tool-call, function-call or reasoning part (thinking counts as content). */
function carriesContent(d: Record<string, unknown>): boolean {
  for (const k of ['refusal', 'reasoning', 'reasoning_content']) if (typeof d[k] === 'string' && d[k] !== '') return true;
  for (const k of ['tool_calls', 'reasoning_details']) if (Array.isArray(d[k]) && (d[k] as unknown[]).length > 0) return true;
  return isObj(d.function_call);
}

function errorText(err: unknown, fallback: string): string {
  if (isObj(err) && typeof err.message === 'string') return err.message;
  if (typeof err === 'string') return err;
  return fallback;
}

function errorWhy(s: OpenAISignals): string {
  const fr = s.finishReason;
  if (fr === 'error') return 'the provider ended the response with finish_reason "error"';
  if (outcomeOf(OPENAI_FINISH, fr) === 'error') return `finish_reason "${fr}": the server gave up on the response`;
  return `native_finish_reason "${s.nativeFinishReason}" ends the response without an answer`;
}

function result(s: OpenAISignals, text: string, usage: ReportedUsage): AdapterResult {
  const outcome = classifyOpenAI(s);
  const base = { finishReason: s.finishReason, nativeFinishReason: s.nativeFinishReason, text, refusal: s.refusal, usage };
  if (outcome === 'error') {
    if (s.error !== undefined && s.error !== null) return errorResult(errorText(s.error, 'the provider reported an error'), s.error, base);
    return errorResult(errorWhy(s), null, base);
  }
  // ok because nothing said otherwise: an unrecognised or missing finish reason is noted
  const decided = outcomeOf(OPENAI_FINISH, s.finishReason) !== null || nativeOutcome(s.nativeFinishReason) !== null;
  const note = outcome === 'ok' && !decided ? unrecognisedNote(s.finishReason) : null;
  return { outcome, ...base, error: null, note };
}

/** The api.openai.com endpoint wants `max_completion_tokens`; compatible servers take `max_tokens`. */
function isOpenAIHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function buildRequest(req: AdapterRequest, provider: ResolvedProvider, apiKey: string | undefined): WireRequest {
  const { max_tokens, ...settings } = req.settings ?? {};
  const body: Record<string, unknown> = { ...settings, model: req.modelId, messages: req.messages };
  if (max_tokens !== undefined) body[isOpenAIHost(provider.baseUrl) ? 'max_completion_tokens' : 'max_tokens'] = max_tokens;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (req.responseSchema) {
    body.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: req.responseSchema, strict: true } };
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: req.stream ? 'text/event-stream' : 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return { url: joinUrl(provider.baseUrl, 'chat/completions'), headers, body: JSON.stringify(body) };
}

function parseBody(text: string): AdapterResult {
  const body = tryJson(text);
  if (!isObj(body)) return errorResult('the response body is not a JSON chat completion', text);
  const usage = usageOf(body.usage);
  const choice = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : undefined;
  if (body.error !== undefined && body.error !== null) {
    const answer = result({ error: body.error, refusal: null, finishReason: null, nativeFinishReason: null }, '', usage);
    // OpenRouter: an upstream failure during generation is a 200 with the error in the body, the
    // twin of the same error as a stream event: a transient code or a quota is no answer
    const kind = transientError(body.error);
    return kind ? { ...answer, broken: eventBreak(kind, errorText(body.error, ''), body.error, 'body') } : answer;
  }
  if (!choice) return errorResult('the response has no choices', text, { usage });
  const message = isObj(choice.message) ? choice.message : {};
  const signals: OpenAISignals = {
    error: choice.error,
    refusal: str(message.refusal) || null, // an empty refusal string carries no refusal
    finishReason: str(choice.finish_reason),
    nativeFinishReason: str(choice.native_finish_reason),
  };
  return answeredBy(result(signals, contentText(message.content), usage), body.model);
}

function createStream(): StreamAccumulator {
  let text = '';
  let refusal: string | null = null;
  let error: unknown;
  /** a mid-stream error event — a chunk with a top-level `error`, or `event: error` — as opposed to a
   * choice's own `error` (the answer ended with an error); only an event can be transient */
  let event = false;
  let finishReason: string | null = null;
  let nativeFinishReason: string | null = null;
  let usage: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };
  let done = false;
  let model: unknown = null;

  const push = (ev: EventSourceMessage) => {
    if (ev.data === '[DONE]') {
      done = true;
      return { delta: '', done, progress: true };
    }
    const chunk = tryJson(ev.data);
    if (!isObj(chunk)) return { delta: '', done, progress: false };
    model ??= chunk.model;
    // content, for transport.idle_timeout: anything but an empty or role-only chunk
    let progress = false;
    if (chunk.error !== undefined && chunk.error !== null) [error, event] = [chunk.error, true];
    else if (ev.event === 'error') [error, event] = [chunk, true];
    if (error !== undefined) progress = true;
    if (isObj(chunk.usage)) {
      usage = usageOf(chunk.usage);
      progress = true;
    }
    let delta = '';
    const choice = Array.isArray(chunk.choices) && isObj(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (choice) {
      const d = isObj(choice.delta) ? choice.delta : {};
      const piece = contentText(d.content);
      if (piece) {
        text += piece;
        delta = piece;
      }
      if (typeof d.refusal === 'string') refusal = (refusal ?? '') + d.refusal;
      if (choice.error !== undefined && choice.error !== null && !event) error = choice.error;
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
      if (typeof choice.native_finish_reason === 'string') nativeFinishReason = choice.native_finish_reason;
      if (piece || typeof choice.finish_reason === 'string' || choice.error != null || carriesContent(d)) progress = true;
    }
    return { delta, done, progress };
  };

  return {
    push,
    usage: () => usage,
    text: () => text,
    broken: () => {
      if (error !== undefined && error !== null) {
        // a rate limit or an overload mid-stream is the call never completing; a native value that
        // reports a broken answer (MALFORMED_FUNCTION_CALL) keeps it an answer: outcome error, as
        // does a choice's own error (the provider ended the answer with an error)
        const transient = event && nativeOutcome(nativeFinishReason) === null ? transientError(error) : null;
        return transient ? eventBreak(transient, errorText(error, ''), error) : null;
      }
      return finishReason === null && nativeFinishReason === null ? unfinished('a finish_reason') : null;
    },
    finish: () => answeredBy(result({ error, refusal: refusal || null, finishReason, nativeFinishReason }, text, usage), model),
  };
}

function readError(status: number, body: unknown, rawText: string) {
  return { ...errorMessage(body, rawText), quota: isSpentQuota(body, rawText), refusal: isRefusalError(status, body) };
}

export const openaiAdapter: ProviderAdapter = { buildRequest, parseBody, createStream, readError };
