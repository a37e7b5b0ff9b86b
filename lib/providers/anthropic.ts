// Anthropic Messages (WIRE.md "anthropic").
import type { EventSourceMessage } from 'eventsource-parser';
import type { Outcome, ResolvedProvider } from '@/lib/engine/types';
import { tryJson, type AdapterRequest, type AdapterResult, type ProviderAdapter, type ReportedUsage, type StreamAccumulator, type WireRequest } from '@/lib/engine/adapter';
import { errorMessage, errorResult, isObj, joinUrl, mentionsQuotaCode, num, splitSystem, str } from './wire-helpers';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; used when the agent sets none. */
export const DEFAULT_MAX_TOKENS = 4096;

const OK = new Set(['end_turn', 'stop_sequence', 'tool_use']);
const TRUNCATED = new Set(['max_tokens', 'model_context_window_exceeded']);

export interface AnthropicSignals {
  /** a body of type "error" or an SSE `event: error` */
  error: unknown;
  /** false when a stream ended before message_stop */
  complete: boolean;
  stopReason: string | null;
}

/** DESIGN: Outcome classification, anthropic row. `pause_turn` is error until continuation exists. */
export function classifyAnthropic(s: AnthropicSignals): Outcome {
  if (s.error !== undefined && s.error !== null) return 'error';
  if (!s.complete) return 'error';
  if (s.stopReason === 'refusal') return 'refusal';
  if (s.stopReason !== null && TRUNCATED.has(s.stopReason)) return 'truncated';
  if (s.stopReason !== null && OK.has(s.stopReason)) return 'ok';
  return 'error';
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
  if (outcome === 'refusal') return { outcome, ...base, refusal: refusalText(text, details), error: null };
  if (outcome !== 'error') return { outcome, ...base, refusal: null, error: null };
  if (s.error !== undefined && s.error !== null) {
    const inner = isObj(s.error) && isObj(s.error.error) ? s.error.error : s.error;
    const msg = isObj(inner) && typeof inner.message === 'string' ? inner.message : 'the provider reported an error';
    return errorResult(msg, s.error, base);
  }
  if (!s.complete) return errorResult('the stream ended before message_stop', null, base);
  if (s.stopReason === null) return errorResult('the response has no stop_reason', null, base);
  return errorResult(`stop_reason "${s.stopReason}" ends the response without an answer`, null, base);
}

function usageOf(u: unknown, prev?: ReportedUsage): ReportedUsage {
  if (!isObj(u)) return prev ?? { inputTokens: 0, outputTokens: 0, costUsd: null };
  const input =
    'input_tokens' in u ? num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens) : (prev?.inputTokens ?? 0);
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
  if (body.type === 'error') return result({ error: body, complete: true, stopReason: null }, '', null, usage);
  return result({ error: undefined, complete: true, stopReason: str(body.stop_reason) }, textOf(body.content), body.stop_details, usage);
}

function createStream(): StreamAccumulator {
  let text = '';
  let error: unknown;
  let stopReason: string | null = null;
  let details: unknown = null;
  let complete = false;
  let usage: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };

  const push = (ev: EventSourceMessage) => {
    const data = tryJson(ev.data);
    if (!isObj(data)) return { delta: '', done: complete };
    const type = typeof data.type === 'string' ? data.type : ev.event;
    let delta = '';
    switch (type) {
      case 'message_start':
        if (isObj(data.message)) usage = usageOf(data.message.usage, usage);
        break;
      case 'content_block_delta':
        if (isObj(data.delta) && data.delta.type === 'text_delta' && typeof data.delta.text === 'string') {
          delta = data.delta.text;
          text += delta;
        }
        break;
      case 'message_delta':
        if (isObj(data.delta)) {
          if (typeof data.delta.stop_reason === 'string') stopReason = data.delta.stop_reason;
          if (data.delta.stop_details !== undefined) details = data.delta.stop_details;
        }
        usage = usageOf(data.usage, usage); // cumulative
        break;
      case 'message_stop':
        complete = true;
        break;
      case 'error':
        error = data;
        break;
      // ping, content_block_start/stop and unknown events carry nothing we need
    }
    return { delta, done: complete || error !== undefined };
  };

  return {
    push,
    usage: () => usage,
    text: () => text,
    finish: () => result({ error, complete, stopReason }, text, details, usage),
  };
}

function readError(status: number, body: unknown, rawText: string) {
  return { message: errorMessage(status, body, rawText), quota: mentionsQuotaCode(rawText) };
}

export const anthropicAdapter: ProviderAdapter = { buildRequest, parseBody, createStream, readError };
