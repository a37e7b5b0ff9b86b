// Anthropic Messages (WIRE.md "anthropic").
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
import { ANTHROPIC_STOP, outcomeOf, unrecognisedNote } from './finish-reasons';
import { answeredBy, errorMessage, errorResult, eventBreak, isObj, isSpentQuota, joinUrl, num, splitSystem, str, unfinished } from './wire-helpers';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; used when the agent sets none. */
export const DEFAULT_MAX_TOKENS = 4096;

/** The HTTP status each Anthropic error type stands for (their errors page), for an error event mid-stream. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export interface AnthropicSignals {
  /** a body of type "error" or an SSE `event: error` that is not transient */
  error: unknown;
  stopReason: string | null;
}

/**
 * DESIGN: Outcome classification, anthropic row: an error → the stop reason; an unrecognised or
 * missing one is ok (noted). `pause_turn` is error until continuation exists.
 */
export function classifyAnthropic(s: AnthropicSignals): Outcome {
  if (s.error !== undefined && s.error !== null) return 'error';
  return outcomeOf(ANTHROPIC_STOP, s.stopReason) ?? 'ok';
}

/** An error event or body (`{type: "error", error: {type, message}}`) that is a spent quota, a rate limit, an overload or a server error; null otherwise. */
export function transientEvent(event: unknown): StreamBreak['error'] | null {
  if (isSpentQuota(event)) return 'quota';
  const inner = isObj(event) && isObj(event.error) ? event.error : event;
  const type = isObj(inner) ? str(inner.type) : null;
  const status = type !== null && Object.hasOwn(ERROR_STATUS, type) ? ERROR_STATUS[type]! : null;
  return status === null ? null : transientEventError(status, false);
}

function innerMessage(event: unknown): string | null {
  const inner = isObj(event) && isObj(event.error) ? event.error : event;
  return isObj(inner) && typeof inner.message === 'string' ? inner.message : null;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const b of content) if (isObj(b) && b.type === 'text' && typeof b.text === 'string') out += b.text;
  return out;
}

function refusalText(text: string, details: unknown): string | null {
  if (text) return text;
  return isObj(details) ? str(details.explanation) : null;
}

function result(s: AnthropicSignals, text: string, details: unknown, usage: ReportedUsage): AdapterResult {
  const outcome = classifyAnthropic(s);
  const base = { finishReason: s.stopReason, nativeFinishReason: null, text, usage };
  if (outcome === 'refusal') return { outcome, ...base, refusal: refusalText(text, details), error: null, note: null };
  if (outcome !== 'error') {
    const note = outcome === 'ok' && outcomeOf(ANTHROPIC_STOP, s.stopReason) === null ? unrecognisedNote(s.stopReason) : null;
    return { outcome, ...base, refusal: null, error: null, note };
  }
  if (s.error !== undefined && s.error !== null) return errorResult(innerMessage(s.error) ?? 'the provider reported an error', s.error, base);
  return errorResult(`stop_reason "${s.stopReason}" ends the response without an answer`, null, base);
}

function usageOf(u: unknown, prev?: ReportedUsage): ReportedUsage {
  if (!isObj(u)) return prev ?? { inputTokens: 0, outputTokens: 0, costUsd: null };
  const input = 'input_tokens' in u ? num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens) : (prev?.inputTokens ?? 0);
  return { inputTokens: input, outputTokens: 'output_tokens' in u ? num(u.output_tokens) : (prev?.outputTokens ?? 0), costUsd: null };
}

function buildRequest(req: AdapterRequest, provider: ResolvedProvider, apiKey: string | undefined): WireRequest {
  const { max_tokens, ...settings } = req.settings ?? {};
  const { system, turns } = splitSystem(req.messages);
  const body: Record<string, unknown> = {
    ...settings,
    model: req.modelId,
    max_tokens: max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: turns.map((m) => ({ role: m.role, content: m.content })),
  };
  if (system !== null) body.system = system;
  if (req.stream) body.stream = true;
  if (req.responseSchema) body.output_config = { format: { type: 'json_schema', schema: req.responseSchema } };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: req.stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
  };
  if (apiKey) headers['x-api-key'] = apiKey;
  return { url: joinUrl(provider.baseUrl, 'messages'), headers, body: JSON.stringify(body) };
}

function parseBody(text: string): AdapterResult {
  const body = tryJson(text);
  if (!isObj(body)) return errorResult('the response body is not a JSON message', text);
  const usage = usageOf(body.usage);
  if (body.type === 'error') {
    // an error object in a 200 body is read like the same `event: error` in a stream
    const kind = transientEvent(body);
    const answer = result({ error: body, stopReason: null }, '', null, usage);
    return kind ? { ...answer, broken: eventBreak(kind, innerMessage(body), body, 'body') } : answer;
  }
  return answeredBy(result({ error: undefined, stopReason: str(body.stop_reason) }, textOf(body.content), body.stop_details, usage), body.model);
}

function createStream(): StreamAccumulator {
  let text = '';
  let error: unknown;
  let stopReason: string | null = null;
  let details: unknown = null;
  let complete = false;
  let usage: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };
  let model: unknown = null;

  const push = (ev: EventSourceMessage) => {
    const data = tryJson(ev.data);
    if (!isObj(data)) return { delta: '', done: complete, progress: false };
    const type = typeof data.type === 'string' ? data.type : ev.event;
    let delta = '';
    // content, for transport.idle_timeout: every delta (text, tool input JSON, thinking), the end,
    // an error; not ping, message_start or a block opening or closing
    let progress = false;
    switch (type) {
      case 'message_start':
        if (isObj(data.message)) {
          usage = usageOf(data.message.usage, usage);
          model = data.message.model;
        }
        break;
      case 'content_block_delta':
        if (isObj(data.delta) && data.delta.type === 'text_delta' && typeof data.delta.text === 'string') {
          delta = data.delta.text;
          text += delta;
        }
        progress = isObj(data.delta) && Object.entries(data.delta).some(([k, v]) => k !== 'type' && typeof v === 'string' && v !== '');
        break;
      case 'message_delta':
        progress = true;
        if (isObj(data.delta)) {
          if (typeof data.delta.stop_reason === 'string') stopReason = data.delta.stop_reason;
          if (data.delta.stop_details !== undefined) details = data.delta.stop_details;
        }
        usage = usageOf(data.usage, usage); // cumulative
        break;
      case 'message_stop':
        complete = true;
        progress = true;
        break;
      case 'error':
        error = data;
        progress = true;
        break;
      // ping, content_block_start/stop and unknown events carry nothing we need
    }
    return { delta, done: complete || error !== undefined, progress };
  };

  return {
    push,
    usage: () => usage,
    text: () => text,
    broken: () => {
      // an overload or a rate limit mid-stream is the call never completing (the transport retries)
      if (error !== undefined) {
        const transient = transientEvent(error);
        return transient ? eventBreak(transient, innerMessage(error), error) : null;
      }
      // a stop_reason came (message_delta): the answer is whole, even if message_stop did not follow
      return stopReason === null ? unfinished('a stop_reason') : null;
    },
    finish: () => answeredBy(result({ error, stopReason }, text, details, usage), model),
  };
}

function readError(_status: number, body: unknown, rawText: string) {
  return { ...errorMessage(body, rawText), quota: isSpentQuota(body, rawText) };
}

export const anthropicAdapter: ProviderAdapter = { buildRequest, parseBody, createStream, readError };
