// Gemini generateContent, v1beta (WIRE.md "gemini").
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
import { GEMINI_FINISH, GEMINI_UNSPECIFIED, outcomeOf, unrecognisedNote } from './finish-reasons';
import { answeredBy, errorMessage, errorResult, eventBreak, isObj, isSpentQuota, joinUrl, num, splitSystem, statusCode, str, unfinished } from './wire-helpers';

export interface GeminiSignals {
  error: unknown;
  /** promptFeedback.blockReason: the prompt itself was blocked */
  blockReason: string | null;
  finishReason: string | null;
}

/**
 * DESIGN: Outcome classification, gemini row: an error → a blocked prompt → the finish reason; an
 * unrecognised or missing one (FINISH_REASON_UNSPECIFIED included) is ok, and noted.
 */
export function classifyGemini(s: GeminiSignals): Outcome {
  if (s.error !== undefined && s.error !== null) return 'error';
  if (s.blockReason !== null) return 'refusal';
  return outcomeOf(GEMINI_FINISH, s.finishReason) ?? 'ok';
}

/**
 * An error object (a chunk mid-stream, or a 200 body: `{error: {code: 503, status: "UNAVAILABLE"}}`)
 * that is a spent quota (`isSpentQuota`: a QuotaFailure without RetryInfo, or naming a per-day
 * quota) or transient; null otherwise.
 */
export function transientChunkError(err: unknown): StreamBreak['error'] | null {
  if (isSpentQuota(err)) return 'quota';
  const status = isObj(err) ? statusCode(err.code) : null;
  return status === null ? null : transientEventError(status, false);
}

/** Thoughts are billed as output (WIRE.md). */
function usageOf(u: unknown, prev?: ReportedUsage): ReportedUsage {
  if (!isObj(u)) return prev ?? { inputTokens: 0, outputTokens: 0, costUsd: null };
  const thoughts = num(u.thoughtsTokenCount);
  return { inputTokens: num(u.promptTokenCount), outputTokens: num(u.candidatesTokenCount) + thoughts, ...(thoughts > 0 && { reasoningTokens: thoughts }), costUsd: null };
}

function candidateText(c: Record<string, unknown> | undefined): string {
  const parts = c && isObj(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
  let out = '';
  for (const p of parts) if (isObj(p) && p.thought !== true && typeof p.text === 'string') out += p.text;
  return out;
}

function firstCandidate(body: Record<string, unknown>): Record<string, unknown> | undefined {
  return Array.isArray(body.candidates) && isObj(body.candidates[0]) ? body.candidates[0] : undefined;
}

function blockReasonOf(body: Record<string, unknown>): string | null {
  return isObj(body.promptFeedback) ? str(body.promptFeedback.blockReason) : null;
}

function result(s: GeminiSignals, text: string, usage: ReportedUsage, finishMessage: string | null): AdapterResult {
  const outcome = classifyGemini(s);
  // a blocked prompt has no finish reason; store the block reason so the record says why
  const finishReason = s.blockReason !== null && s.finishReason === null ? `promptFeedback.blockReason: ${s.blockReason}` : s.finishReason;
  const base = { finishReason, nativeFinishReason: null, text, usage };
  if (outcome === 'refusal') return { outcome, ...base, refusal: text || null, error: null, note: null };
  if (outcome !== 'error') {
    const unknown = outcome === 'ok' && outcomeOf(GEMINI_FINISH, s.finishReason) === null;
    const note = !unknown ? null : s.finishReason === GEMINI_UNSPECIFIED ? `no finish reason (${GEMINI_UNSPECIFIED})` : unrecognisedNote(s.finishReason);
    return { outcome, ...base, refusal: null, error: null, note };
  }
  if (s.error !== undefined && s.error !== null) {
    const msg = isObj(s.error) && typeof s.error.message === 'string' ? s.error.message : 'the provider reported an error';
    return errorResult(msg, s.error, base);
  }
  return errorResult(finishMessage ? `finishReason ${s.finishReason}: ${finishMessage}` : `finishReason ${s.finishReason}`, null, base);
}

const SETTING_NAMES: Record<string, string> = {
  max_tokens: 'maxOutputTokens',
  top_p: 'topP',
  top_k: 'topK',
  stop: 'stopSequences',
  stop_sequences: 'stopSequences',
  presence_penalty: 'presencePenalty',
  frequency_penalty: 'frequencyPenalty',
};

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function buildRequest(req: AdapterRequest, provider: ResolvedProvider, apiKey: string | undefined): WireRequest {
  const generationConfig: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.settings ?? {})) {
    if (v === undefined) continue;
    const name = (Object.hasOwn(SETTING_NAMES, k) ? SETTING_NAMES[k] : undefined) ?? camel(k); // a setting "constructor" is not Object.prototype's
    generationConfig[name] = name === 'stopSequences' && typeof v === 'string' ? [v] : v;
  }
  if (req.responseSchema) {
    generationConfig.responseMimeType = 'application/json';
    generationConfig.responseJsonSchema = req.responseSchema;
  }
  const { system, turns } = splitSystem(req.messages);
  const body: Record<string, unknown> = {
    contents: turns.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
  };
  if (system !== null) body.systemInstruction = { parts: [{ text: system }] };
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  // the id is one segment of the path, encoded: nothing in it ("/", "..", "?", "#") can reach another endpoint with the key
  const model = encodeURIComponent(req.modelId.replace(/^models\//, ''));
  const path = req.stream ? `models/${model}:streamGenerateContent?alt=sse` : `models/${model}:generateContent`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: req.stream ? 'text/event-stream' : 'application/json' };
  if (apiKey) headers['x-goog-api-key'] = apiKey;
  return { url: joinUrl(provider.baseUrl, path), headers, body: JSON.stringify(body) };
}

function parseBody(text: string): AdapterResult {
  const body = tryJson(text);
  if (!isObj(body)) return errorResult('the response body is not a JSON GenerateContentResponse', text);
  const usage = usageOf(body.usageMetadata);
  if (body.error !== undefined && body.error !== null) {
    // an error object in a 200 body is read like the same error chunk in a stream
    const answer = result({ error: body.error, blockReason: null, finishReason: null }, '', usage, null);
    const kind = transientChunkError(body.error);
    return kind ? { ...answer, broken: eventBreak(kind, isObj(body.error) ? str(body.error.message) : null, body.error, 'body') } : answer;
  }
  const c = firstCandidate(body);
  const blockReason = blockReasonOf(body);
  return answeredBy(
    result({ error: undefined, blockReason, finishReason: c ? str(c.finishReason) : null }, candidateText(c), usage, c ? str(c.finishMessage) : null),
    body.modelVersion,
  );
}

function hasParts(c: Record<string, unknown>): boolean {
  const parts = isObj(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
  return parts.some((p) => isObj(p) && Object.keys(p).some((k) => k !== 'text' || (typeof p.text === 'string' && p.text !== '')));
}

function createStream(): StreamAccumulator {
  let text = '';
  let error: unknown;
  let blockReason: string | null = null;
  let finishReason: string | null = null;
  let finishMessage: string | null = null;
  let usage: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };
  let model: unknown = null;

  const push = (ev: EventSourceMessage) => {
    const chunk = tryJson(ev.data);
    if (!isObj(chunk)) return { delta: '', done: false, progress: false };
    if (chunk.error !== undefined && chunk.error !== null) error = chunk.error;
    model ??= chunk.modelVersion;
    usage = usageOf(chunk.usageMetadata, usage); // cumulative: the last one wins
    blockReason = blockReasonOf(chunk) ?? blockReason;
    const c = firstCandidate(chunk);
    const delta = candidateText(c);
    text += delta;
    if (c && typeof c.finishReason === 'string') finishReason = c.finishReason;
    if (c && typeof c.finishMessage === 'string') finishMessage = c.finishMessage;
    // content, for transport.idle_timeout: any part (text, thought, function call), a finish or
    // block reason, an error; not an empty chunk
    const progress = error !== undefined || blockReasonOf(chunk) !== null || (c !== undefined && (typeof c.finishReason === 'string' || hasParts(c)));
    return { delta, done: error !== undefined, progress };
  };

  return {
    push,
    usage: () => usage,
    text: () => text,
    broken: () => {
      // an overload or a rate limit mid-stream is the call never completing (the transport retries)
      if (error !== undefined) {
        const transient = transientChunkError(error);
        return transient ? eventBreak(transient, isObj(error) ? str(error.message) : null, error) : null;
      }
      // "if empty, the model has not stopped generating": a stream that ends so did not complete
      if (blockReason !== null) return null;
      return finishReason === null || finishReason === GEMINI_UNSPECIFIED ? unfinished('a finishReason') : null;
    },
    finish: () => answeredBy(result({ error, blockReason, finishReason }, text, usage, finishMessage), model),
  };
}

function readError(_status: number, body: unknown, rawText: string) {
  return { ...errorMessage(body, rawText), quota: isSpentQuota(body, rawText) };
}

export const geminiAdapter: ProviderAdapter = { buildRequest, parseBody, createStream, readError };
