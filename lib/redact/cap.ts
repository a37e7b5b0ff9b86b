// The one bound on stored failure text (DESIGN: Redaction, Storage): an error body, an excerpt of
// a failed answer, a discarded stream's text, a validation message. Past the bound the text is cut
// and says so. What the seed keeps whole — a node's output, a run's input, the request as sent —
// never goes through here.

/**
 * Longest failure text stored, in characters (UTF-16 code units), the marker included: 64 Ki, as
 * much as the transport reads of an error body (ERROR_BODY_MAX_BYTES), and room for a whole failed
 * answer of about 16 000 tokens.
 */
export const FAILURE_TEXT_MAX_CHARS = 64 * 1024;

const marker = (more: number) => `… [truncated: ${more} more characters]`;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * `text` if it fits in `FAILURE_TEXT_MAX_CHARS`; otherwise its beginning and a visible marker
 * ("… [truncated: N more characters]"), `FAILURE_TEXT_MAX_CHARS` long in all. Idempotent, and never
 * splits a surrogate pair. Cap after redacting: a cut pattern would no longer be recognised.
 */
export function capFailureText(text: string): string {
  const max = FAILURE_TEXT_MAX_CHARS;
  if (text.length <= max) return text;
  // the marker's length depends on the number it carries: shrink `keep` until both fit
  let keep = max;
  while (keep + marker(text.length - keep).length > max || isHighSurrogate(text.charCodeAt(keep - 1))) keep--;
  return text.slice(0, keep) + marker(text.length - keep);
}
