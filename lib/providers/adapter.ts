// What every wire adapter does (DESIGN.md §5): build the HTTP request of one answer, and turn the
// provider's reply into one normalised result whose outcome is decided from the HTTP status /
// error object / error event, then the refusal signal, then the finish reason — before anything
// is parsed out of the text. The engine's transport does the I/O; adapters are pure.
import type { EventSourceMessage } from 'eventsource-parser';
import type { Message, NodeCall, Outcome, ResolvedProvider, WireApi } from '@/lib/engine/types';

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
  /** a quota/spend-limit 429: never retried (DESIGN §6) */
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

export const NO_USAGE: ReportedUsage = { inputTokens: 0, outputTokens: 0, costUsd: null };

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `base_url` + path, whatever the trailing slashes. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** Quota and spend limits arrive as 429s but will not clear by waiting (DESIGN §6). OpenRouter
 * forwards the upstream body as a JSON string in `metadata.raw`, hence a search of the raw text. */
export function mentionsQuotaCode(rawText: string): boolean {
  return rawText.includes('insufficient_quota') || rawText.includes('enforced_spend_limit_reached');
}

/** The `message` of an `{error: {message}}` body, else a short excerpt of the body. */
export function errorMessage(status: number, body: unknown, rawText: string): string {
  const err = isObj(body) ? body.error : undefined;
  const msg = isObj(err) ? str(err.message) : typeof err === 'string' ? err : null;
  if (msg) return msg;
  const excerpt = rawText.replace(/\s+/g, ' ').trim().slice(0, 200);
  return excerpt ? `HTTP ${status}: ${excerpt}` : `HTTP ${status}`;
}

export function errorResult(message: string, detail: unknown, partial: Partial<AdapterResult> = {}): AdapterResult {
  return {
    outcome: 'error',
    finishReason: partial.finishReason ?? null,
    nativeFinishReason: partial.nativeFinishReason ?? null,
    text: partial.text ?? '',
    refusal: partial.refusal ?? null,
    usage: partial.usage ?? NO_USAGE,
    error: { message, detail: detail === undefined || detail === null ? null : typeof detail === 'string' ? detail : JSON.stringify(detail) },
  };
}

/** Splits the conversation into system text and the user/assistant turns. */
export function splitSystem(messages: Message[]): { system: string | null; turns: Message[] } {
  const sys = messages.filter((m) => m.role === 'system').map((m) => m.content);
  return { system: sys.length ? sys.join('\n\n') : null, turns: messages.filter((m) => m.role !== 'system') };
}

export type { WireApi };
