// The finish reasons each wire protocol knows, and the outcome each one means (DESIGN: Outcome
// classification; the per-protocol table with its sources is in docs/WIRE.md "Finish reasons").
// A value that is not listed here is *unrecognised*: per the seed page ("Anything else — the call
// is ok") the answer is ok, validated as usual, and the attempt carries a note saying so
// (`unrecognisedNote`). Values that mean the server gave up (vLLM's `abort`, DeepSeek's
// `insufficient_system_resource`) are listed as errors.
import type { Outcome } from '@/lib/engine/types';

type Table = ReadonlyMap<string, Outcome>;

const table = (rows: Record<Outcome, readonly string[]>): Table =>
  new Map((Object.entries(rows) as [Outcome, readonly string[]][]).flatMap(([outcome, values]) => values.map((v) => [v, outcome] as const)));

/**
 * openai protocol: OpenAI Chat Completions and the servers that speak it. `model_length` is
 * Mistral's (the model's own context length was reached); `abort` and `repetition` are vLLM's
 * (the request was aborted; a repetitive pattern was cut off), `error` is OpenRouter's, Mistral's
 * and vLLM's; `insufficient_system_resource` is DeepSeek's (generation interrupted for want of
 * inference resources): each the server giving up, an error, never an ok answer.
 */
export const OPENAI_FINISH: Table = table({
  ok: ['stop', 'tool_calls', 'function_call'],
  truncated: ['length', 'model_length'],
  refusal: ['content_filter'],
  error: ['error', 'abort', 'repetition', 'insufficient_system_resource'],
});

/** anthropic protocol: `stop_reason`. `pause_turn` is error until continuation exists. */
export const ANTHROPIC_STOP: Table = table({
  ok: ['end_turn', 'stop_sequence', 'tool_use'],
  truncated: ['max_tokens', 'model_context_window_exceeded'],
  refusal: ['refusal'],
  error: ['pause_turn'],
});

/**
 * gemini protocol: `finishReason` (Gemini API and Vertex AI). `LANGUAGE` (an unsupported language)
 * and Vertex's `MODEL_ARMOR` are the provider declining: refusal. `FINISH_REASON_UNSPECIFIED` is not
 * listed: it says nothing, and is read as no finish reason at all (`GEMINI_UNSPECIFIED`).
 */
export const GEMINI_FINISH: Table = table({
  ok: ['STOP'],
  truncated: ['MAX_TOKENS'],
  refusal: ['SAFETY', 'RECITATION', 'LANGUAGE', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'MODEL_ARMOR'],
  error: ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'MALFORMED_RESPONSE', 'MISSING_THOUGHT_SIGNATURE', 'OTHER', 'IMAGE_OTHER', 'NO_IMAGE'],
});

export const GEMINI_UNSPECIFIED = 'FINISH_REASON_UNSPECIFIED';

/**
 * OpenRouter's `native_finish_reason` is the upstream model's own value. One that means a refusal,
 * a truncation or an error in its own protocol decides the outcome even when the normalised
 * `finish_reason` is `stop` (e.g. native `SAFETY`, `refusal`, `MALFORMED_FUNCTION_CALL`,
 * `MAX_TOKENS`); an ok or unknown native value leaves it to `finish_reason`.
 */
export const NATIVE_DECIDES: Table = new Map([OPENAI_FINISH, ANTHROPIC_STOP, GEMINI_FINISH].flatMap((t) => [...t].filter(([, outcome]) => outcome !== 'ok')));

/** The outcome a known value means, or null for an unrecognised (or absent) one. */
export function outcomeOf(t: Table, value: string | null): Outcome | null {
  return value === null ? null : (t.get(value) ?? null);
}

/**
 * The note an `ok` attempt carries when its finish reason decided nothing: an unrecognised value
 * (stored as sent), or none at all on a whole (non-stream) response.
 */
export function unrecognisedNote(value: string | null): string {
  return value === null ? 'no finish reason' : `unrecognised finish reason \`${value}\``;
}
