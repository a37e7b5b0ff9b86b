// Email detector (DESIGN: "Redaction"): local@domain with a letter TLD.
//
// Driven by indexOf('@'): text without '@' costs one native scan. From each '@' we walk left over
// at most 64 local-part characters and right over at most 253 domain characters (RFC 5321 limits),
// so every '@' costs O(1) and the whole pass is linear.
//
// Rules:
// - local part: ASCII letters/digits and `. _ % + -`, or Latin/Greek/Cyrillic letters ("jürgen");
//   1–64 chars; it may not end with '.', and leading dots or an ellipsis before it are left out
//   ("Wait...anna@x.io"). Han/kana/Hangul are not address characters here, so Chinese or Japanese
//   text written straight up against an address stays outside it.
// - domain: dot-separated labels of letters/digits/hyphens (Latin/Greek/Cyrillic letters allowed),
//   each 1–63, not starting with '-'; at least two labels.
// - TLD: the rightmost label that is all letters (2+) or punycode (`xn--…`). Trailing labels that
//   are not (`a@b.com.123`) are left outside the match; if none qualifies it is not an email
//   (`react@18.2.0`).
// - not an asset name: `logo@2x.png`, `icon@3x.webp`, `x@y.js` — a density suffix (`@2x`) or a
//   file-extension "TLD" that is no real TLD rejects the match.
// - or, instead of a domain, an address literal (RFC 5321 4.1.3): `user@[192.0.2.1]` (octets of
//   1–3 digits, `[192.168.000.001]` too), `user@[IPv6:2001:db8::1]` (any IPv6 text form: inside the
//   brackets nothing else is meant), and `user@[2001:db8::1]` without the tag when the IP detector
//   would take it for an address. The whole address is the match, brackets included; an invalid or
//   unclosed literal leaves the address to the IP detector.
import type { Reach, Span } from './span';
import { COLON, DASH, DOT, isAsciiAlnum, isAsciiLetter, isDigit, isHexDigit, isUnicodeWordUnit } from './chars';
import { isIpv6, isIpv6Syntax, isLooseIpv4 } from './ip';

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const MAX_LABEL = 63;

/**
 * The longest match is 64 + 1 + 253 characters. From the '@' the detector reads at most 65
 * characters back (one past the longest local part) and, walking labels, up to the label after the
 * 253rd domain character plus two characters of look-ahead; a match starts at most 64 before the '@'.
 */
export const EMAIL_REACH: Reach = { before: MAX_LOCAL + 1, after: MAX_LOCAL + 1 + MAX_DOMAIN + 1 + MAX_LABEL + 3 };

/** The longest address literal's content: "IPv6:" and a 45-character IPv6 text form. */
const MAX_LITERAL = 5 + 45;
const LBRACKET = 91;
const RBRACKET = 93;

// File extensions that look like TLDs but are not delegated TLDs. Real TLDs that double as
// extensions (.md, .py, .rs, .zip, .mov …) are deliberately absent: those stay emails.
const FILE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'avif',
  'bmp',
  'ico',
  'tif',
  'tiff',
  'heic',
  'js',
  'mjs',
  'cjs',
  'jsx',
  'ts',
  'mts',
  'cts',
  'tsx',
  'css',
  'scss',
  'less',
  'json',
  'yaml',
  'yml',
  'html',
  'htm',
  'xml',
  'txt',
  'csv',
  'pdf',
  'lock',
  'wasm',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  'mp3',
  'mp4',
  'webm',
  'wav',
  'ogg',
  'gz',
  'tgz',
  'tar',
  'jar',
  'exe',
  'dll',
]);

function isLocalChar(c: number): boolean {
  return isAsciiAlnum(c) || c === DOT || c === 95 /* _ */ || c === 37 /* % */ || c === 43 /* + */ || c === DASH || isUnicodeWordUnit(c);
}

function isLabelChar(c: number): boolean {
  return isAsciiAlnum(c) || c === DASH || isUnicodeWordUnit(c);
}

function isLetterUnit(c: number): boolean {
  return isAsciiLetter(c) || isUnicodeWordUnit(c);
}

/** Is [start, end) a TLD: 2+ letters, or punycode "xn--…", and not a file extension? */
function isTld(text: string, start: number, end: number): boolean {
  const len = end - start;
  if (len < 2) return false;
  if (
    len >= 5 &&
    (text.charCodeAt(start) | 32) === 120 &&
    (text.charCodeAt(start + 1) | 32) === 110 &&
    text.charCodeAt(start + 2) === DASH &&
    text.charCodeAt(start + 3) === DASH
  ) {
    return true; // xn--…
  }
  for (let i = start; i < end; i++) {
    if (!isLetterUnit(text.charCodeAt(i))) return false;
  }
  return len > 5 || !FILE_EXTENSIONS.has(text.slice(start, end).toLowerCase());
}

/** `2x`, `3X`: the image-density suffix of `logo@2x.png`. */
function isDensitySuffix(text: string, start: number, end: number): boolean {
  if (end - start < 2 || (text.charCodeAt(end - 1) | 32) !== 120) return false;
  for (let i = start; i < end - 1; i++) {
    if (!isDigit(text.charCodeAt(i))) return false;
  }
  return true;
}

/** Start of the local part ending just before `at`, or -1. */
function localStart(text: string, at: number): number {
  let s = at;
  while (s > 0 && isLocalChar(text.charCodeAt(s - 1))) {
    s--;
    if (at - s > MAX_LOCAL) return -1;
  }
  // An ellipsis or doubled dot is punctuation, not part of the address.
  for (let k = at - 2; k >= s; k--) {
    if (text.charCodeAt(k) === DOT && text.charCodeAt(k + 1) === DOT) {
      s = k + 2;
      break;
    }
  }
  while (s < at && text.charCodeAt(s) === DOT) s++;
  if (s === at || text.charCodeAt(at - 1) === DOT) return -1;
  for (let k = s; k < at; k++) {
    const c = text.charCodeAt(k);
    if (isAsciiAlnum(c) || c >= 0x80) return s;
  }
  return -1; // only symbols, e.g. "+-@x.com"
}

/** End of the domain after `at` (exclusive), or -1. */
function domainEnd(text: string, at: number): number {
  const n = text.length;
  let labels = 0;
  let tldEnd = -1; // end of the rightmost label (after the first) that is a valid TLD
  let p = at + 1;
  for (;;) {
    const ls = p;
    while (p < n && p - ls <= MAX_LABEL && isLabelChar(text.charCodeAt(p))) p++;
    if (p - ls > MAX_LABEL || p === ls || text.charCodeAt(ls) === DASH) break;
    let le = p;
    const last = text.charCodeAt(le - 1) === DASH;
    if (last) {
      if (text.charCodeAt(p) === DOT) break; // "a-.b" is not a label
      while (le > ls && text.charCodeAt(le - 1) === DASH) le--; // "…com-" ends at "com"
    } else if (le - (at + 1) > MAX_DOMAIN) {
      break;
    }
    if (labels === 0 && isDensitySuffix(text, ls, le)) return -1;
    labels++;
    if (labels >= 2 && isTld(text, ls, le)) tldEnd = le;
    const next = text.charCodeAt(p + 1);
    if (last || text.charCodeAt(p) !== DOT || !isLabelChar(next) || next === DASH) break;
    p++;
  }
  // A label cut short by the length limit continues with a letter/digit: not an address.
  return tldEnd === -1 || isAsciiAlnum(text.charCodeAt(tldEnd)) ? -1 : tldEnd;
}

/** End (after the ']') of the address literal whose '[' is at `open`, or -1. */
function addressLiteralEnd(text: string, open: number): number {
  let p = open + 1;
  const tagged =
    (text.charCodeAt(p) | 32) === 105 &&
    (text.charCodeAt(p + 1) | 32) === 112 &&
    (text.charCodeAt(p + 2) | 32) === 118 &&
    text.charCodeAt(p + 3) === 54 &&
    text.charCodeAt(p + 4) === COLON;
  if (tagged) p += 5; // "IPv6:"
  let q = p;
  while (q - open <= MAX_LITERAL) {
    const c = text.charCodeAt(q);
    if (!(isHexDigit(c) || c === DOT || c === COLON)) break;
    q++;
  }
  if (q === p || text.charCodeAt(q) !== RBRACKET) return -1;
  if (tagged) return isIpv6Syntax(text, p, q) ? q + 1 : -1;
  return isLooseIpv4(text, p, q) || isIpv6(text, p, q) ? q + 1 : -1;
}

export function findEmails(text: string, out: Span[]): void {
  let at = text.indexOf('@');
  while (at !== -1) {
    const s = localStart(text, at);
    if (s !== -1) {
      const e = text.charCodeAt(at + 1) === LBRACKET ? addressLiteralEnd(text, at + 1) : domainEnd(text, at);
      if (e !== -1) out.push({ start: s, end: e, kind: 'email' });
    }
    at = text.indexOf('@', at + 1);
  }
}
