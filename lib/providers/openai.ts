// OpenAI Chat Completions and every compatible server, OpenRouter included (WIRE.md "openai").
import type { EventSourceMessage } from 'eventsource-parser';
import type { Outcome, ResolvedProvider } from '@/lib/engine/types';
import { tryJson, type AdapterRequest, type AdapterResult, type ProviderAdapter, type ReportedUsage, type StreamAccumulator, type WireRequest } from '@/lib/engine/adapter';
import { errorMessage, errorResult, isObj, joinUrl, mentionsQuotaCode, num, str } from './wire-helpers';

const OK = new Set(['stop', 'tool_calls', 'function_call']);
// OpenRouter normalises these upstream values to `length`, but a router may pass them through.
const TRUNCATED_NATIVE = new Set(['max_tokens', 'MAX_TOKENS', 'model_context_window_exceeded']);

export interface OpenAISignals {
  /** a top-level, choice-level or chunk-level `error` object */
  error: unknown;
  refusal: string | null;
  finishReason: string | null;
  nativeFinishReason: string | null;
}

/** DESIGN: Outcome classification, openai row: error object → refusal signal → finish reason. */
export function classifyOpenAI(s: OpenAISignals): Outcome {
  if (s.error !== undefined && s.error !== null) return 'error';
  if (s.refusal !== null) return 'refusal';
  if (s.finishReason === 'content_filter') return 'refusal';
  if (s.finishReason === 'error') return 'error';
  if (s.finishReason === 'length' || (s.nativeFinishReason !== null && TRUNCATED_NATIVE.has(s.nativeFinishReason))) return 'truncated';
  if (s.finishReason !== null && OK.has(s.finishReason)) return 'ok';
  return 'error'; // null or a value we do not know
}

function usageOf(u: unknown): ReportedUsage {
  if (!isObj(u)) return { inputTokens: 0, outputTokens: 0, costUsd: null };
  return {
    inputTokens: num(u.prompt_tokens),
    outputTokens: num(u.completion_tokens),
    costUsd: typeof u.cost === 'number' && Number.isFinite(u.cost) ? u.cost : null,
  };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const p of content) if (isObj(p) && typeof p.text === 'string') out += p.text;
  return out;
}

function errorText(err: unknown, fallback: string): string {
  if (isObj(err) && typeof err.message === 'string') return err.message;
  if (typeof err === 'string') return err;
  return fallback;
}

function result(s: OpenAISignals, text: string, usage: ReportedUsage, ended: string): AdapterResult {
  const outcome = classifyOpenAI(s);
  const base = { finishReason: s.finishReason, nativeFinishReason: s.nativeFinishReason, text, refusal: s.refusal, usage };
  if (outcome !== 'error') return { outcome, ...base, error: null };
  if (s.error !== undefined && s.error !== null) return errorResult(errorText(s.error, 'the provider reported an error'), s.error, base);
  if (s.finishReason === 'error') return errorResult('the provider ended the response with finish_reason "error"', null, base);
  if (s.finishReason === null) return errorResult(ended, null, base);
  return errorResult(`unknown finish_reason "${s.finishReason}"`, null, base);
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
    return result({ error: body.error, refusal: null, finishReason: null, nativeFinishReason: null }, '', usage, '');
  }
  if (!choice) return errorResult('the response has no choices', text, { usage });
  const message = isObj(choice.message) ? choice.message : {};
  const signals: OpenAISignals = {
    error: choice.error,
    refusal: str(message.refusal) || null, // an empty refusal string carries no refusal
    finishReason: str(choice.finish_reason),
    nativeFinishReason: str(choice.native_finish_reason),
  };
  return result(signals, contentText(message.content), usage, 'the response has no finish_reason');
}

function createStream(): StreamAccumulator {
  let text = '';
  let refusal: string | null = null;
  let error: unknown;
  let finishReason: string | null = null;
  let nativeFinishReason: string | null = null;
  let usage: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };
  let done = false;

  const push = (ev: EventSourceMessage) => {
    if (ev.data === '[DONE]') {
      done = true;
      return { delta: '', done };
    }
    const chunk = tryJson(ev.data);
    if (!isObj(chunk)) return { delta: '', done };
    if (chunk.error !== undefined && chunk.error !== null) error = chunk.error;
    else if (ev.event === 'error') error = chunk;
    if (isObj(chunk.usage)) usage = usageOf(chunk.usage);
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
      if (choice.error !== undefined && choice.error !== null) error = choice.error;
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
      if (typeof choice.native_finish_reason === 'string') nativeFinishReason = choice.native_finish_reason;
    }
    return { delta, done };
  };

  return {
    push,
    usage: () => usage,
    text: () => text,
    finish: () => result({ error, refusal: refusal || null, finishReason, nativeFinishReason }, text, usage, 'the stream ended without a finish_reason'),
  };
}

function readError(_status: number, body: unknown, rawText: string) {
  return { message: errorMessage(_status, body, rawText), quota: mentionsQuotaCode(rawText) };
}

export const openaiAdapter: ProviderAdapter = { buildRequest, parseBody, createStream, readError };
