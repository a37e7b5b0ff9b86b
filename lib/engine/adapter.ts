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
  outputTokens: number;
  costUsd: number | null;
}

export interface AdapterResult {
  outcome: Outcome;
  /** the finish reason as the provider sent it (OpenRouter: its normalised `finish_reason`) */
  finishReason: string | null;
  /** OpenRouter's `native_finish_reason` (the upstream model's own value); null elsewhere */
  nativeFinishReason: string | null;
  text: string;
  refusal: string | null;
  usage: ReportedUsage;
  /** why the outcome is `error`: the provider's words, and the raw error object as JSON */
  error: { message: string; detail: string | null } | null;
}

export interface StreamAccumulator {
  /** one SSE event in; the text it adds (may be '') and whether the stream is complete */
  push(ev: EventSourceMessage): { delta: string; done: boolean };
  /** usage seen so far (cumulative counters: the latest value) */
  usage(): ReportedUsage;
  /** the text streamed so far */
  text(): string;
  /** the result once the stream has ended (cleanly: an unfinished stream is outcome error) */
  finish(): AdapterResult;
}

/** What a non-2xx reply says, beyond its status. */
export interface ProviderErrorInfo {
  message: string;
  /** a quota/spend-limit 429: never retried (DESIGN: Transport retry and rate limits) */
  quota: boolean;
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
