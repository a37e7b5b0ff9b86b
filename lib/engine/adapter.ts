// What the engine needs of a wire adapter (DESIGN: Outcome classification): build the HTTP request
// of one answer, and turn the provider's reply into one normalised result whose outcome is decided
// from the HTTP status / error object / error event, then the refusal signal, then the finish
// reason — before anything is parsed out of the text. The engine owns this interface and does the
// I/O; the adapters in lib/providers implement it, are pure, and are handed to `callNode`.
import type { EventSourceMessage } from 'eventsource-parser';
import type { Message, NodeCall, Outcome, ResolvedProvider, WireApi } from './types';

export interface AdapterRequest {
  /** the model id as the provider names it (the part after the first colon of the model string) */
  modelId: string;
  /** system messages first, then the user/assistant conversation */
  messages: Message[];
  settings?: NodeCall['settings'];
  /** set only for strict: true — the schema goes into the provider's structured-output field */
  responseSchema?: Record<string, unknown>;
  stream: boolean;
}

export interface WireRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Usage as the provider reported it; costUsd null = the provider sent no cost (use the catalogue). */
export interface ReportedUsage {
  inputTokens: number;
  /** the billed output tokens, reasoning included whatever field the provider counts it in (WIRE.md) */
  outputTokens: number;
  /** the reasoning ("thinking") tokens, when the provider states them apart — part of `outputTokens` */
  reasoningTokens?: number;
  /** what the provider says it charged (OpenRouter `usage.cost`, xAI `cost_in_usd_ticks`); null: not stated */
  costUsd: number | null;
}

export interface AdapterResult {
  outcome: Outcome;
  /** the finish reason as the provider sent it (OpenRouter: its normalised `finish_reason`) */
  finishReason: string | null;
  /** OpenRouter's `native_finish_reason` (the upstream model's own value); null elsewhere */
  nativeFinishReason: string | null;
  /** the model the reply says answered (`model`; Gemini's `modelVersion`); absent or null when it names none */
  responseModel?: string | null;
  text: string;
  refusal: string | null;
  usage: ReportedUsage;
  /** why the outcome is `error`: the provider's words, and the raw error object as JSON */
  error: { message: string; detail: string | null } | null;
  /**
   * a 2xx body that is no answer (DESIGN: Transport retry and rate limits): its error object reports
   * a transient failure (a rate limit, an overload, a server error) or a spent quota — read like the
   * same error event in a stream; the try fails with it. Absent on an answer.
   */
  broken?: StreamBreak;
  /**
   * set on an `ok` answer whose finish reason decided nothing (DESIGN: Outcome classification):
   * "unrecognised finish reason `eos`", or "no finish reason" on a whole response; null otherwise
   */
  note: string | null;
}

/**
 * A stream that did not complete (DESIGN: Transport retry and rate limits): it ended without any
 * finish reason, or an error event reported a rate limit, an overload or a server error. The try
 * fails like a dropped connection and the transport decides whether another one starts; a
 * rate-limit event pauses the model like a 429. The same error object in a 2xx body
 * (`AdapterResult.broken`) is read alike. `quota`: the error says the quota or spend limit is
 * spent — the try fails, is never tried again, and pauses nothing.
 */
export interface StreamBreak {
  /** stored on the try: `rate_limited` (pauses the model), `server_error`, `timeout`, `connection` (no finish reason), or `quota` (stored as `rate_limited`, not retried) */
  error: 'rate_limited' | 'server_error' | 'timeout' | 'connection' | 'quota';
  /** why, in the provider's words where it gave some (scrubbed and cut by the engine) */
  message: string;
  /** the error event as sent, as JSON; null when the stream just ended */
  detail: string | null;
}

export interface StreamAccumulator {
  /**
   * one SSE event in; the text it adds (may be '') and whether the stream is complete.
   * `progress`: the event carried content — text, JSON, tool-call or thinking deltas, a finish
   * reason, an error, the usage or the end — which resets transport.idle_timeout; pings, empty
   * deltas and role-only chunks do not (SSE comments never reach the adapter). Absent: the event
   * counts as progress when it adds text or completes the stream.
   */
  push(ev: EventSourceMessage): { delta: string; done: boolean; progress?: boolean };
  /** usage seen so far (cumulative counters: the latest value) */
  usage(): ReportedUsage;
  /** the text streamed so far */
  text(): string;
  /** asked first, once the stream has ended: the stream did not complete, so there is no result */
  broken(): StreamBreak | null;
  /** the result of a stream that completed (`broken()` is null) */
  finish(): AdapterResult;
}

/** What a non-2xx reply says, beyond its status. */
export interface ProviderErrorInfo {
  /** the provider's own error message, or (`excerpt: true`) the body's text, whitespace collapsed;
   * never cut here: the engine scrubs the key first and cuts after (DESIGN: Redaction) */
  message: string;
  /** the message is the body itself (not a provider error object): shown as a short excerpt */
  excerpt?: boolean;
  /** a spent quota or spend limit (`isSpentQuota` in lib/providers, the one rule): never retried, never a pause (DESIGN: Transport retry and rate limits) */
  quota: boolean;
  /** the provider declined to answer (a moderation 403, a content-filter 400: `isRefusalError`): outcome `refusal`, never retried by the transport */
  refusal?: boolean;
}

export interface ProviderAdapter {
  buildRequest(req: AdapterRequest, provider: ResolvedProvider, apiKey: string | undefined): WireRequest;
  /** a 2xx non-stream body (raw text: a body that is not JSON is an `error` outcome) */
  parseBody(text: string): AdapterResult;
  createStream(): StreamAccumulator;
  /** a non-2xx body, parsed when JSON; the headers decide nothing here (see transport) */
  readError(status: number, body: unknown, rawText: string): ProviderErrorInfo;
}

/** One adapter per wire protocol; lib/providers exports the built-in table (`builtinAdapters`). */
export type AdapterTable = Record<WireApi, ProviderAdapter>;

export const NO_USAGE: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };

/** The parsed JSON of a body, or undefined when it is not JSON (the caller keeps the raw text). */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
