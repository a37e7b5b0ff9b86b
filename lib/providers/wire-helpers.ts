// Helpers the wire adapters share: reading JSON bodies and provider errors, URLs, the system
// prompt. The adapter interface itself is the engine's (lib/engine/adapter.ts).
import { NO_USAGE, type AdapterResult, type StreamBreak } from '@/lib/engine/adapter';
import type { Message } from '@/lib/engine/types';

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** `base_url` + path, whatever the trailing slashes. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** Quota and spend limits arrive as 429s but will not clear by waiting (DESIGN: Transport retry and
 * rate limits). OpenRouter forwards the upstream body as a JSON string in `metadata.raw`, hence a
 * search of the raw text. */
export function mentionsQuotaCode(rawText: string): boolean {
  return rawText.includes('insufficient_quota') || rawText.includes('enforced_spend_limit_reached');
}

/**
 * The `message` of an `{error: {message}}` body, else the body's text with its whitespace collapsed
 * (`excerpt: true`; '' for an empty body). Neither is cut or prefixed here: the engine scrubs the
 * key from the whole text before it cuts it, and writes the `HTTP <status>` itself, once.
 */
export function errorMessage(body: unknown, rawText: string): { message: string; excerpt?: true } {
  const err = isObj(body) ? body.error : undefined;
  const msg = isObj(err) ? str(err.message) : typeof err === 'string' ? err : null;
  if (msg) return { message: msg };
  return { message: rawText.replace(/\s+/g, ' ').trim(), excerpt: true };
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
    note: null,
  };
}

/** A numeric status in an error object's `code` (`429`, `"503"`), or null. */
export function statusCode(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : null;
}

const EVENT_WORDS: Record<StreamBreak['error'], string> = {
  rate_limited: 'a rate-limit error event in the stream',
  server_error: 'a server error event in the stream (overloaded or failing)',
  timeout: 'a timeout error event in the stream',
  connection: 'the stream broke off',
};

/** The stream did not complete: an error event that reports a transient failure (DESIGN: Transport retry and rate limits). */
export function eventBreak(error: StreamBreak['error'], providerMessage: string | null, event: unknown): StreamBreak {
  return { error, message: providerMessage ? `${EVENT_WORDS[error]}: ${providerMessage}` : EVENT_WORDS[error], detail: JSON.stringify(event) };
}

/** The stream ended cleanly, but without any finish reason: it did not complete. */
export function unfinished(what: string): StreamBreak {
  return { error: 'connection', message: `the stream ended without ${what}: the response did not complete`, detail: null };
}

/** Splits the conversation into system text and the user/assistant turns. */
export function splitSystem(messages: Message[]): { system: string | null; turns: Message[] } {
  const sys = messages.filter((m) => m.role === 'system').map((m) => m.content);
  return { system: sys.length ? sys.join('\n\n') : null, turns: messages.filter((m) => m.role !== 'system') };
}
