// IP-address detector (DESIGN: "Redaction"), IPv4 and IPv6.
//
// IPv4: four dot-separated decimal octets 0–255 in canonical form — no leading zeros, so
// "01.02.03.004" and "192.168.001.001" are NOT addresses (modern inet_pton and Python's ipaddress
// reject them too, because leading zeros historically meant octal). Optional CIDR suffix /0–/32.
// Not glued to a letter/digit ("v1.2.3.4", "1.2.3.4a") nor part of a longer dotted run
// ("1.2.3.4.5", "host.1.2.3.4"); a trailing sentence dot or an ellipsis before it is fine.
// Bare version-like quads such as "1.2.3.4" are valid addresses and are redacted.
//
// IPv6 (RFC 4291 text forms): full ("2001:0db8:0:0:0:0:0:1"), compressed ("2001:db8::1",
// "::1"), IPv4-suffixed ("::ffff:192.0.2.1"), zone id ("fe80::1%eth0"), CIDR suffix /0–/128.
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
import { COLON, DOT, PERCENT, SLASH, isAsciiAlnum, isDigit, isHexDigit, isWordChar } from './chars';

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

/** End of a canonical octet 0–255 at `p`, or -1. */
function octetEnd(text: string, p: number): number {
  const c0 = text.charCodeAt(p);
  if (!isDigit(c0)) return -1;
  if (c0 === 48) return isDigit(text.charCodeAt(p + 1)) ? -1 : p + 1;
  let q = p + 1;
  while (q < p + 3 && isDigit(text.charCodeAt(q))) q++;
  if (isDigit(text.charCodeAt(q))) return -1;
  return Number(text.slice(p, q)) <= 255 ? q : -1;
}

/** True if [a, b) is exactly a canonical dotted quad. */
export function isIpv4(text: string, a = 0, b = text.length): boolean {
  let p = a;
  for (let k = 0; k < 4; k++) {
    p = octetEnd(text, p);
    if (p === -1 || p > b) return false;
    if (k < 3) {
      if (text.charCodeAt(p) !== DOT) return false;
      p++;
    }
  }
  return p === b;
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
  if (!isIpv4(text, a, b)) return;
  out.push({ start: a, end: trimmedEnd ? b : withPrefixLength(text, b, 32), kind: 'ip' });
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

/** True if `str` is a text-form IPv6 address that is not better explained as something else. */
export function isIpv6(str: string): boolean {
  const gap = str.indexOf('::');
  if (gap !== -1 && str.indexOf('::', gap + 1) !== -1) return false;
  const parts: string[] = [];
  if (gap === -1) {
    parts.push(...str.split(':'));
  } else {
    if (gap > 0) parts.push(...str.slice(0, gap).split(':'));
    if (gap + 2 < str.length) parts.push(...str.slice(gap + 2).split(':'));
  }
  if (parts.length === 0) return false; // "::"
  let groups = 0;
  let hexDigits = 0;
  let hasV4 = false;
  let allPairs = true;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k];
    if (part.includes('.')) {
      const last = k === parts.length - 1 && (gap === -1 || gap + 2 < str.length);
      if (!last || !isIpv4(part)) return false;
      groups += 2;
      hasV4 = true;
      continue;
    }
    if (part.length < 1 || part.length > 4) return false;
    for (let j = 0; j < part.length; j++) if (!isHexDigit(part.charCodeAt(j))) return false;
    groups++;
    hexDigits += part.length;
    if (part.length !== 2) allPairs = false;
  }
  if (gap === -1 ? groups !== 8 : groups > 7) return false;
  if (hasV4) return true;
  if (!/[0-9]/.test(str)) return false; // "a::b", "dead::beef": scopes, not addresses
  if (gap === -1) return !allPairs; // EUI-64 / MAC-style "00:1a:2b:ff:fe:3c:4d:5e"
  return hexDigits >= 4 || str === '::1';
}

function checkIpv6Run(text: string, s: number, e: number, out: Span[]): void {
  let a = s;
  if (text.charCodeAt(a) === COLON && text.charCodeAt(a + 1) !== COLON) {
    a++; // "ip:2001:db8::1": the first colon belongs to the label
  } else if (isWordChar(text.charCodeAt(s - 1))) {
    return; // "std::cout", "Foo::Bar"
  }
  let b = e;
  while (b > a && text.charCodeAt(b - 1) === DOT) b--;
  let ok = isIpv6(text.slice(a, b));
  if (!ok && text.charCodeAt(b - 1) === COLON && text.charCodeAt(b - 2) !== COLON) {
    b--; // "… 2001:db8::1: connection refused"
    ok = isIpv6(text.slice(a, b));
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
