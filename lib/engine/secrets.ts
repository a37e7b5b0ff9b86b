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
}

/** A key's leading characters at the very end of `text` (≥ KEY_PREFIX_MIN of them) become <API_KEY>. */
function scrubKeyPrefixAtEnd(text: string, key: string): string {
  for (let n = Math.min(key.length - 1, text.length); n >= KEY_PREFIX_MIN; n--) {
    if (text.endsWith(key.slice(0, n))) return text.slice(0, text.length - n) + KEY_MARK;
  }
  return text;
}

/**
 * Scrubs `key` from `text`, then cuts it to `opts.max` characters; at a cut (this one, or an
 * earlier one the caller reports with `opts.cut`), a leftover prefix of the key is scrubbed too.
 * Keys shorter than 4 characters are not looked for (they would match ordinary text).
 */
export function scrubSecret(text: string, key: string | undefined, opts: ScrubOptions = {}): string {
  const usable = key !== undefined && key.length >= 4 ? key : undefined;
  let out = usable && text.includes(usable) ? text.split(usable).join(KEY_MARK) : text;
  let cut = opts.cut === true;
  if (opts.max !== undefined && out.length > opts.max) {
    out = out.slice(0, Math.max(0, opts.max));
    // do not leave half a surrogate pair at the cut
    const last = out.charCodeAt(out.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
    cut = true;
    if (usable) out = scrubKeyPrefixAtEnd(out, usable);
    return `${out}…`;
  }
  if (cut && usable) out = scrubKeyPrefixAtEnd(out, usable);
  return out;
}

// `scheme://user:password@` — bounded quantifiers: linear time on any input (DESIGN: Redaction)
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]{1,2048}@/gi;

/** Replaces the userinfo of every URL in `text` (`https://user:secret@host` → `https://<credentials>@host`). */
export function stripUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, '$1<credentials>@');
}
