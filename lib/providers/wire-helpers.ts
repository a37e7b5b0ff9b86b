// Helpers the wire adapters share: reading JSON bodies and provider errors, URLs, the system
// prompt. The adapter interface itself is the engine's (lib/engine/adapter.ts).
import { NO_USAGE, type AdapterResult } from '@/lib/engine/adapter';
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
