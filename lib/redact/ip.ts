// IP-address detector (DESIGN: "Redaction"), IPv4 and IPv6.
//
// IPv4: four dot-separated decimal octets 0–255, in canonical form ("192.168.0.1") or each
// zero-padded to three digits as fixed-width tools print them ("192.168.000.001", "010.000.000.001").
// Other leading zeros are not an address form: "01.02.03.004" and "192.168.01.01" read as versions
// or dates and stay. A padded quad ending in ".000.000" whose first octet has no leading zero is an
// amount in dotted thousands ("150.000.000.000", "Rp 120.100.000.000") unless a prefix length follows
// ("192.168.000.000/16"). Optional CIDR suffix /0–/32.
// Not glued to a letter/digit ("v1.2.3.4", "1.2.3.4a") nor part of a longer dotted run
// ("1.2.3.4.5", "host.1.2.3.4"); a trailing sentence dot or an ellipsis before it is fine.
// Bare version-like quads such as "1.2.3.4" are valid addresses and are redacted.
//
// IPv6 (RFC 4291 text forms): full ("2001:0db8:0:0:0:0:0:1"), compressed ("2001:db8::1",
// "::1"), IPv4-suffixed ("::ffff:192.0.2.1"), zone id ("fe80::1%eth0"), CIDR suffix /0–/128, after
// a label ("ip:2001:db8::1", and RFC 5321's tag "IPv6:2001:db8::1").
// Rejected because they are something else:
// - MAC / EUI-64 addresses: no "::" and every group exactly two hex digits ("00:1a:2b:3c:4d:5e");
// - times and ratios: too few groups without "::" ("12:34:56");
// - C++/Rust/Ruby scopes and CSS pseudo-elements: glued to a word ("std::cout", "Foo::Bar",
//   "a::before"), or no decimal digit at all ("a::b", "dead::beef"), or a compressed form with
//   fewer than four hex digits other than the loopback "::1" ("1::2", slices like "x[::2]").
//
// Candidates come from native regex passes ("d.d.d.d", "h:h"); each looks at the maximal run of
// address characters around it once and the next search resumes after that run: linear time. Runs longer
// than any address (e.g. "::::…", "1.1.1.1.1…") are skipped without parsing.
import type { Reach, Span } from './span';
import { COLON, DOT, PERCENT, SLASH, ZERO, isAsciiAlnum, isDigit, isHexDigit, isWordChar } from './chars';

const MAX_V6_RUN = 64; // longest text form incl. an IPv4 tail is 45; leave room for trailing dots
const MAX_ZONE = 32;

/**
 * An address lies in a run of address characters of at most 64 (IPv4: 24), read with one character
 * on either side; after it a zone id ("%" + 32) and a prefix length ("/128") and one more character.
 */
export const IP_REACH: Reach = { before: MAX_V6_RUN + 1, after: MAX_V6_RUN + 1 + 1 + MAX_ZONE + 1 + 4 + 1 };

function isV4RunChar(c: number): boolean {
  return isDigit(c) || c === DOT;
}

function isV6RunChar(c: number): boolean {
  return isHexDigit(c) || c === COLON || c === DOT;
}

// How a dotted quad's octets are written (quadForm).
const NOT_QUAD = 0;
/** no leading zeros: "192.168.0.1" */
const CANONICAL = 1;
/** every octet three digits: "192.168.000.001" */
const PADDED = 2;
/** 1–3 digits each, any leading zeros: "192.168.01.1" (RFC 5321's Snum, inside an address literal) */
const LOOSE = 3;

/**
 * How [a, b) is written if it is exactly a dotted quad of octets 0–255 (1–3 digits each), else
 * NOT_QUAD. One pass: CANONICAL if no octet has a leading zero, PADDED if every octet has three
 * digits, LOOSE otherwise.
 */
function quadForm(text: string, a: number, b: number): number {
  let p = a;
  let canonical = true;
  let padded = true;
  for (let k = 0; k < 4; k++) {
    let value = 0;
    const s = p;
    while (p < s + 3 && isDigit(text.charCodeAt(p))) value = value * 10 + text.charCodeAt(p++) - ZERO;
    const len = p - s;
    if (len === 0 || value > 255 || isDigit(text.charCodeAt(p))) return NOT_QUAD;
    if (len > 1 && text.charCodeAt(s) === ZERO) canonical = false;
    if (len !== 3) padded = false;
    if (k < 3) {
      if (text.charCodeAt(p) !== DOT) return NOT_QUAD;
      p++;
    }
  }
  if (p !== b) return NOT_QUAD;
  return canonical ? CANONICAL : padded ? PADDED : LOOSE;
}

/** True if [a, b) is exactly a dotted quad, canonical or zero-padded to three digits an octet. */
export function isIpv4(text: string, a = 0, b = text.length): boolean {
  const form = quadForm(text, a, b);
  return form === CANONICAL || form === PADDED;
}

/** True if [a, b) is exactly a dotted quad with 1–3 digits an octet, any leading zeros (RFC 5321 Snum). */
export function isLooseIpv4(text: string, a = 0, b = text.length): boolean {
  return quadForm(text, a, b) !== NOT_QUAD;
}

/** End of an optional "/prefix" (0..max, canonical) at `p`, else `p`. */
function withPrefixLength(text: string, p: number, max: number): number {
  if (text.charCodeAt(p) !== SLASH) return p;
  const s = p + 1;
  let q = s;
  while (q < s + 3 && isDigit(text.charCodeAt(q))) q++;
  if (q === s || isWordChar(text.charCodeAt(q))) return p;
  if (q - s > 1 && text.charCodeAt(s) === 48) return p;
  return Number(text.slice(s, q)) <= max ? q : p;
}

function checkIpv4Run(text: string, s: number, e: number, out: Span[]): void {
  let a = s;
  let b = e;
  if (text.charCodeAt(a) === DOT) {
    while (a < b && text.charCodeAt(a) === DOT) a++;
    // "host.1.2.3.4" continues a dotted name; "see ...1.2.3.4" is an ellipsis
    if (a - s === 1 && isWordChar(text.charCodeAt(s - 1))) return;
  } else if (isWordChar(text.charCodeAt(s - 1))) {
    return;
  }
  const trimmedEnd = text.charCodeAt(b - 1) === DOT;
  while (b > a && text.charCodeAt(b - 1) === DOT) b--;
  if (isWordChar(text.charCodeAt(e))) return; // "1.2.3.4a", "1.2.3.4.example"
  const form = quadForm(text, a, b);
  if (form !== CANONICAL && form !== PADDED) return;
  const end = trimmedEnd ? b : withPrefixLength(text, b, 32);
  // "150.000.000.000": dotted thousands, unless the first octet is padded or a prefix length follows
  if (form === PADDED && end === b && text.charCodeAt(a) !== ZERO && text.startsWith('000.000', b - 7)) return;
  out.push({ start: a, end, kind: 'ip' });
}

// Candidate dots, found natively: "d.d.d.d" (the first dot is one past the match start).
const V4_CANDIDATE = /\d\.\d{1,3}\.\d{1,3}\.\d/g;

function findIpv4(text: string, out: Span[]): void {
  const n = text.length;
  const re = new RegExp(V4_CANDIDATE.source, 'g');
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const d = m.index + 1;
    let s = d - 1;
    while (s > 0 && isV4RunChar(text.charCodeAt(s - 1))) s--;
    let e = d + 1;
    while (e < n && isV4RunChar(text.charCodeAt(e))) e++;
    if (e - s <= 24) checkIpv4Run(text, s, e, out);
    re.lastIndex = e;
  }
}

/** What the heuristics of `isIpv6` look at in a valid IPv6 text form. */
interface Ipv6Shape {
  compressed: boolean;
  hasV4: boolean;
  hexDigits: number;
  /** every hex group exactly two digits */
  allPairs: boolean;
}

/**
 * The shape of [a, b) if it is any RFC 4291 text form of an IPv6 address ("::" included), else
 * null. Read in place, group by group: no slice, no split (it runs on every colon run, times too).
 */
function ipv6Shape(text: string, a: number, b: number): Ipv6Shape | null {
  let p = a;
  let groups = 0;
  let hexDigits = 0;
  let hasV4 = false;
  let allPairs = true;
  let compressed = false;
  if (text.charCodeAt(p) === COLON) {
    if (p + 1 >= b || text.charCodeAt(p + 1) !== COLON) return null; // ":1"
    compressed = true;
    p += 2;
  }
  while (p < b) {
    const s = p;
    while (p < b && p - s < 5 && isHexDigit(text.charCodeAt(p))) p++;
    if (p < b && text.charCodeAt(p) === DOT) {
      if (!isIpv4(text, s, b)) return null; // an IPv4 tail ends the address
      groups += 2;
      hasV4 = true;
      break;
    }
    const len = p - s;
    if (len < 1 || len > 4) return null;
    groups++;
    hexDigits += len;
    if (len !== 2) allPairs = false;
    if (p === b) break;
    if (text.charCodeAt(p) !== COLON) return null;
    p++;
    if (p === b) return null; // "1:"
    if (text.charCodeAt(p) === COLON) {
      if (compressed) return null; // a second "::"
      compressed = true;
      p++;
    }
  }
  if (compressed ? groups > 7 : groups !== 8) return null;
  return { compressed, hasV4, hexDigits, allPairs };
}

/** True if [a, b) is any text form of an IPv6 address: where nothing else can be meant (an address literal). */
export function isIpv6Syntax(text: string, a = 0, b = text.length): boolean {
  return ipv6Shape(text, a, b) !== null;
}

/** True if [a, b) is a text-form IPv6 address that is not better explained as something else. */
export function isIpv6(text: string, a = 0, b = text.length): boolean {
  const shape = ipv6Shape(text, a, b);
  if (shape === null) return false;
  if (shape.hasV4) return true;
  let digit = false;
  for (let k = a; k < b && !digit; k++) digit = isDigit(text.charCodeAt(k));
  if (!digit) return false; // "a::b", "dead::beef", "::": scopes, not addresses
  if (!shape.compressed) return !shape.allPairs; // EUI-64 / MAC-style "00:1a:2b:ff:fe:3c:4d:5e"
  return shape.hexDigits >= 4 || (b - a === 3 && text.startsWith('::1', a));
}

/** Is `s` the "6" of an "IPv6:" tag (RFC 5321's address-literal tag) not glued to a word before it? */
function isIpv6Tag(text: string, s: number): boolean {
  return (
    text.charCodeAt(s) === 54 &&
    text.charCodeAt(s + 1) === COLON &&
    (text.charCodeAt(s - 3) | 32) === 105 &&
    (text.charCodeAt(s - 2) | 32) === 112 &&
    (text.charCodeAt(s - 1) | 32) === 118 &&
    !isWordChar(text.charCodeAt(s - 4))
  );
}

function checkIpv6Run(text: string, s: number, e: number, out: Span[]): void {
  let a = s;
  if (text.charCodeAt(a) === COLON && text.charCodeAt(a + 1) !== COLON) {
    a++; // "ip:2001:db8::1": the first colon belongs to the label
  } else if (isIpv6Tag(text, s)) {
    a += 2; // "IPv6:2001:db8::1": the run starts at the tag's "6:"
  } else if (isWordChar(text.charCodeAt(s - 1))) {
    return; // "std::cout", "Foo::Bar"
  }
  let b = e;
  while (b > a && text.charCodeAt(b - 1) === DOT) b--;
  let ok = isIpv6(text, a, b);
  if (!ok && text.charCodeAt(b - 1) === COLON && text.charCodeAt(b - 2) !== COLON) {
    b--; // "… 2001:db8::1: connection refused"
    ok = isIpv6(text, a, b);
  }
  if (!ok) return;
  if (b === e) {
    if (isWordChar(text.charCodeAt(e))) return; // "a::bcg", "fe80::1_x"
    if (text.charCodeAt(e) === PERCENT) b = withZoneId(text, e);
    b = withPrefixLength(text, b, 128);
  }
  out.push({ start: a, end: b, kind: 'ip' });
}

/** End of a "%zone" (e.g. "%eth0", "%25en0") at `p`, else `p`. */
function withZoneId(text: string, p: number): number {
  let q = p + 1;
  while (q <= p + MAX_ZONE) {
    const c = text.charCodeAt(q);
    if (!(isAsciiAlnum(c) || c === 95 || c === DOT || c === 45 || c === 126)) break;
    q++;
  }
  while (q > p + 1 && text.charCodeAt(q - 1) === DOT) q--;
  if (q === p + 1 || isWordChar(text.charCodeAt(q))) return p;
  return q;
}

// Candidate colons, found natively: a colon between two address characters other than '.'
// (JSON's `"key":value` and prose's "Note: …" never qualify).
const V6_CANDIDATE = /[0-9A-Fa-f:]:[0-9A-Fa-f:]/g;

function findIpv6(text: string, out: Span[]): void {
  const n = text.length;
  const re = new RegExp(V6_CANDIDATE.source, 'g');
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const c = m.index + 1;
    let s = c;
    while (s > 0 && isV6RunChar(text.charCodeAt(s - 1))) s--;
    let e = c + 1;
    while (e < n && isV6RunChar(text.charCodeAt(e))) e++;
    if (e - s >= 2 && e - s <= MAX_V6_RUN) checkIpv6Run(text, s, e, out);
    re.lastIndex = e;
  }
}

export function findIps(text: string, out: Span[]): void {
  findIpv4(text, out);
  findIpv6(text, out);
}
