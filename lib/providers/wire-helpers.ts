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

/** The codes and limit names that say a quota or spend limit is spent, wherever they appear. */
const QUOTA_WORDS = [
  // OpenAI (also forwarded by OpenRouter inside `metadata.raw`, a JSON string: hence a search of the text)
  'insufficient_quota',
  // Anthropic: a 429 whose error.details.error_code says the workspace spend limit is reached
  'enforced_spend_limit_reached',
  // OpenRouter's daily cap of free-model requests ("Rate limit exceeded: free-models-per-day…")
  'free-models-per-day',
];

function googleDetail(err: unknown, type: string): Record<string, unknown> | undefined {
  const inner = isObj(err) && isObj(err.error) ? err.error : err;
  const details = isObj(inner) && Array.isArray(inner.details) ? inner.details : [];
  return details.find((d): d is Record<string, unknown> => isObj(d) && typeof d['@type'] === 'string' && d['@type'].endsWith(type));
}

/**
 * The one rule saying "this is a spent quota" (DESIGN: Transport retry and rate limits, "A spent quota
 * is not a rate limit"): waiting will not clear it, so it is never retried on the same model and never
 * pauses the model. Used for every protocol, on an error status, a 2xx body and a stream event.
 * `err`: the parsed error body or event (`{error: …}` or the error object itself); `rawText` its text.
 * - OpenAI `insufficient_quota`, Anthropic `enforced_spend_limit_reached`, OpenRouter `free-models-per-day`;
 * - Gemini: a `google.rpc.QuotaFailure` with no `RetryInfo`, or one naming a per-day quota
 *   (`quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier"`) — its RetryInfo's 34 s do not
 *   bring the day's allowance back. A per-minute QuotaFailure with a RetryInfo is a rate limit.
 */
export function isSpentQuota(err: unknown, rawText: string = JSON.stringify(err) ?? ''): boolean {
  if (QUOTA_WORDS.some((w) => rawText.includes(w))) return true;
  const failure = googleDetail(err, 'google.rpc.QuotaFailure');
  if (!failure) return false;
  if (!googleDetail(err, 'google.rpc.RetryInfo')) return true;
  const violations = Array.isArray(failure.violations) ? failure.violations : [];
  return violations.some((v) => isObj(v) && [v.quotaId, v.quotaMetric].some((id) => typeof id === 'string' && /PerDay/i.test(id)));
}

/**
 * A non-2xx reply that is the provider declining to answer (DESIGN: Outcome classification): outcome
 * `refusal`, following `on_refusal`, not a client error. Every other 4xx stays a client error.
 * - OpenRouter's moderation: a 403 whose message says the input "was flagged" (its errors page),
 *   with `metadata.reasons` / `metadata.flagged_input`;
 * - Azure OpenAI's content filter: a 400 with `code: "content_filter"` or
 *   `innererror.code: "ResponsibleAIPolicyViolation"`;
 * - OpenAI: a 400 `invalid_prompt`, a prompt flagged under its usage policy.
 */
export function isRefusalError(status: number, body: unknown): boolean {
  const err = isObj(body) && isObj(body.error) ? body.error : undefined;
  if (!err) return false;
  const meta = isObj(err.metadata) ? err.metadata : {};
  // the moderation words, not any 403 saying "flagged" (an account flagged for abuse is no refusal of this prompt)
  if (status === 403) return Array.isArray(meta.reasons) || typeof meta.flagged_input === 'string' || /input was flagged|requires moderation/i.test(str(err.message) ?? '');
  if (status !== 400) return false;
  const inner = isObj(err.innererror) ? err.innererror : {};
  return err.code === 'content_filter' || inner.code === 'ResponsibleAIPolicyViolation' || err.code === 'invalid_prompt';
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

/** `r` with the model the reply says answered (its `model`, Gemini's `modelVersion`), when it names one */
export function answeredBy(r: AdapterResult, model: unknown): AdapterResult {
  return typeof model === 'string' && model !== '' ? { ...r, responseModel: model } : r;
}

/** A numeric status in an error object's `code` (`429`, `"503"`), or null. */
export function statusCode(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : null;
}

/** What each break is, and what follows where it was found ("a server error event in the stream (overloaded or failing)"). */
const EVENT_WORDS: Record<StreamBreak['error'], [what: string, why: string]> = {
  rate_limited: ['a rate-limit error', ''],
  server_error: ['a server error', ' (overloaded or failing)'],
  timeout: ['a timeout error', ''],
  connection: ['an error', ''],
  quota: ['a quota error', ' (the quota or spend limit is spent: waiting will not clear it, not retried)'],
};

/**
 * The reply is no answer: an error event in a stream, or an error object in a 2xx body (`where`),
 * that reports a transient failure or a spent quota (DESIGN: Transport retry and rate limits).
 */
export function eventBreak(error: StreamBreak['error'], providerMessage: string | null, event: unknown, where: 'stream' | 'body' = 'stream'): StreamBreak {
  const [what, why] = EVENT_WORDS[error];
  const words = `${what}${where === 'stream' ? ' event in the stream' : ' in the 200 body'}${why}`;
  return { error, message: providerMessage ? `${words}: ${providerMessage}` : words, detail: JSON.stringify(event) };
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
