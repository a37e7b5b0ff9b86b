// No credential in anything stored or shown (DESIGN: Redaction): the API key is replaced by
// <API_KEY> in whatever a provider sends back, the userinfo of a URL (`user:secret@`) in network
// error messages by <credentials>, and text is cut only after it is scrubbed — a key straddling the
// cut would otherwise survive as a prefix of all but its last characters.

export const KEY_MARK = '<API_KEY>';

/** A prefix of the key this long is treated as the key when it ends a cut text. */
export const KEY_PREFIX_MIN = 8;

export interface ScrubOptions {
  /** cut the scrubbed text to this many characters (then `…` is appended) */
  max?: number;
  /** the text was already cut (e.g. a body read up to a byte limit): its end is a cut too */
  cut?: boolean;
  /** our own words (a network error quoting a URL), not the provider's: only secrets are scrubbed,
   * the five redaction detectors are not applied (an address in "ECONNREFUSED 10.0.0.5:443" stays) */
  secretsOnly?: boolean;
  /** what a key becomes (default KEY_MARK): the logs say <REDACTED> for every secret (lib/observe/logger.ts) */
  mark?: string;
}

/** A key's leading characters at the very end of `text` (≥ KEY_PREFIX_MIN of them) become <API_KEY>. */
function scrubKeyPrefixAtEnd(text: string, key: string, mark: string): string {
  for (let n = Math.min(key.length - 1, text.length); n >= KEY_PREFIX_MIN; n--) {
    if (text.endsWith(key.slice(0, n))) return text.slice(0, text.length - n) + mark;
  }
  return text;
}

/**
 * Scrubs `key` — or each of several keys, the longest first — from `text`, then cuts it to
 * `opts.max` characters; at a cut (this one, or an earlier one the caller reports with `opts.cut`),
 * a leftover prefix of a key is scrubbed too. Keys shorter than 4 characters are not looked for
 * (they would match ordinary text).
 */
export function scrubSecret(text: string, key: string | undefined | readonly (string | undefined)[], opts: ScrubOptions = {}): string {
  const keys = (typeof key === 'string' || key === undefined ? [key] : [...key]).filter((k): k is string => k !== undefined && k.length >= 4).sort((a, b) => b.length - a.length);
  const mark = opts.mark ?? KEY_MARK;
  let out = text;
  for (const k of keys) if (out.includes(k)) out = out.split(k).join(mark);
  const cut = opts.cut === true;
  if (opts.max !== undefined && out.length > opts.max) {
    out = out.slice(0, Math.max(0, opts.max));
    // do not leave half a surrogate pair at the cut
    const last = out.charCodeAt(out.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
    for (const k of keys) out = scrubKeyPrefixAtEnd(out, k, mark);
    return `${out}…`;
  }
  if (cut) for (const k of keys) out = scrubKeyPrefixAtEnd(out, k, mark);
  return out;
}

// `scheme://user:password@` — bounded quantifiers: linear time on any input (DESIGN: Redaction)
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]{1,2048}@/gi;

/** Replaces the userinfo of every URL in `text` (`https://user:secret@host` → `https://<credentials>@host`). */
export function stripUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, '$1<credentials>@');
}
