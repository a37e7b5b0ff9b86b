// FROZEN: lib/redact/phone.ts as it was before the recall work (commit 803635d), kept only so that
// bench/redact.bench.ts can measure the detectors BEFORE and AFTER on the same corpus and machine.
// Do not edit; do not import from production code.
// Phone-number detector (DESIGN: "Redaction"). Phone numbers have no checksum, so this is the weakest
// detector: any IBAN, card, email or IP claiming the same text wins over it.
//
// A phone is detected only when it has a phone's *shape*:
//
//  1. International, `+`: "+44 20 7946 0958", "+1-415-555-0132", "+14155550132",
//     "+1 (415) 555-0132", "+49 (0)30 1234567". Country code starts 1–9; 8–15 digits in all
//     (E.164), not counting a "(0)" trunk marker; groups joined by one space, dash or dot, with at
//     most one parenthesised group.
//  2. International, `00`: "0044 20 7946 0958" — like 1 after the "00", but it must contain a
//     separator (a bare "0012345678" is far more often a zero-padded ID).
//  3. Parenthesised area code: "(415) 555-0132", "(030) 1234567", "(0)30 1234567" — 1–5 digits in
//     the parentheses (a single digit only if it is 0), at least 6 digits after them, 9–12 in all.
//  4. North-American 3-3-4: "415-555-0132", "415.555.0132", "415 555 0132", optionally after
//     "1-" / "1 " / "1." — one consistent separator, exactly 3, 3 and 4 digits.
//  5. National with trunk 0: "06 12 34 56 78", "030 1234567", "020 7946 0958", "07700 900123" —
//     starts "0" then 1–9; one consistent separator (space, dash or dot); first group 2–5 digits,
//     later groups 2–8; 9–12 digits in all. Or "area/number" with exactly one slash
//     ("089/12345678"). Or one unbroken run of 10–11 digits starting 0[1-9] ("0612345678").
//
// Not phones (by construction):
//  - plain digit runs without +, 00, a trunk 0 or parentheses: "Order 12345678", a bare
//    10-digit "4155550132", 13-digit timestamps;
//  - dates and times: "2024-01-15", "15.01.2024", "01/15/2024" (a slash only in "area/number"),
//    "12:34:56" (colon is no separator); 2-2-4 groups whose last looks like a year (19xx/20xx)
//    are rejected even with a trunk 0 ("01-02-2024-12");
//  - zero-padded IPv4-like quads "01.02.03.004" (four dotted groups of at most 3 digits);
//  - version numbers "1.2.3", "v10.4.12", IPs, UUIDs and hex: a number glued to a letter, or to
//    another number by '.', '-', '/' or ':', neither starts nor ends a phone;
//  - national numbers without a trunk 0 in other shapes (Spanish "612 34 56 78") — a documented
//    miss; write them with +34 to have them caught.
//
// An international number takes following spaced groups while it stays within 15 digits (a
// one-digit group only right after the country code), so "+1 415 555 0132 12 times" loses its
// "12" too: over-redacting a neighbour beats leaking part of a number.
// A spaced phone may be followed by another spaced number ("call 415 555 0132 2 times"), but a
// dashed/dotted one may not run on ("415-555-0132-99" is an ID). Candidates come from one native
// regex pass; each reads a bounded number of characters (≤ 15 digits) and starts never fall inside
// a digit run: linear time.
import type { Span } from '../../lib/redact/span';
import { COLON, DASH, DOT, LPAREN, PLUS, RPAREN, SLASH, SPACE, ZERO, countDigits, isAsciiAlnum, isDigit, isWordChar } from '../../lib/redact/chars';

const MAX_E164 = 15;

function isSep(c: number): boolean {
  return c === SPACE || c === DASH || c === DOT;
}

function isNonZeroDigit(c: number): boolean {
  return c >= 49 && c <= 57;
}

/** May a phone start at `i` ('+', '(' or a digit)? */
function canStart(text: string, i: number): boolean {
  const prev = text.charCodeAt(i - 1);
  if (isWordChar(prev) || prev === PLUS) return false;
  if (text.charCodeAt(i) === PLUS) return true; // "tel:+33…"; "…00+01:00" is caught above
  if ((prev === DASH || prev === DOT || prev === SLASH || prev === COLON) && isAsciiAlnum(text.charCodeAt(i - 2))) {
    return false;
  }
  return true;
}

/** May a phone end at `e`? */
function canEnd(text: string, e: number): boolean {
  const c = text.charCodeAt(e);
  if (isWordChar(c)) return false;
  if ((c === DASH || c === DOT || c === SLASH || c === COLON) && isAsciiAlnum(text.charCodeAt(e + 1))) return false;
  return true;
}

/** Shapes 1 and 2, from the first country-code digit at `p`. */
function matchInternational(text: string, p: number, requireSeparator: boolean): number {
  if (!isNonZeroDigit(text.charCodeAt(p))) return -1;
  let digits = countDigits(text, p, MAX_E164);
  if (digits > MAX_E164) return -1;
  let q = p + digits;
  let separators = 0;
  let usedParen = false;
  for (;;) {
    let r = q;
    if (isSep(text.charCodeAt(r))) r++;
    if (!usedParen && text.charCodeAt(r) === LPAREN && (r === q || text.charCodeAt(q) !== DOT)) {
      const inner = countDigits(text, r + 1, 5);
      if (inner < 1 || inner > 5 || text.charCodeAt(r + 1 + inner) !== RPAREN) break;
      const trunkOnly = inner === 1 && text.charCodeAt(r + 1) === ZERO;
      let t = r + inner + 2;
      if (text.charCodeAt(t) === SPACE || text.charCodeAt(t) === DASH) t++;
      const after = countDigits(text, t, MAX_E164);
      const total = digits + (trunkOnly ? 0 : inner) + after;
      if (after === 0 || total > MAX_E164) break;
      digits = total;
      q = t + after;
      separators++;
      usedParen = true;
      continue;
    }
    if (r === q || !isDigit(text.charCodeAt(r))) break;
    const g = countDigits(text, r, MAX_E164);
    // A one-digit group only right after the country code ("+33 6 12 …"), so a trailing
    // "+44 20 7946 0958 2 times" keeps its "2".
    if (digits + g > MAX_E164 || (g === 1 && separators > 0)) break;
    digits += g;
    q = r + g;
    separators++;
  }
  if (digits < 8 || (requireSeparator && separators === 0)) return -1;
  return canEnd(text, q) ? q : -1;
}

/** Shape 3, from the '(' at `i`. */
function matchParenthesised(text: string, i: number): number {
  const inner = countDigits(text, i + 1, 5);
  if (inner < 1 || inner > 5 || text.charCodeAt(i + 1 + inner) !== RPAREN) return -1;
  if (inner === 1 && text.charCodeAt(i + 1) !== ZERO) return -1; // "(1) 234 …" is a list item
  let p = i + inner + 2;
  if (text.charCodeAt(p) === SPACE || text.charCodeAt(p) === DASH) p++;
  let g = countDigits(text, p, 8);
  if (g < 2 || g > 8) return -1;
  let after = g;
  p += g;
  while (isSep(text.charCodeAt(p))) {
    g = countDigits(text, p + 1, 8);
    if (g < 2 || g > 8 || inner + after + g > 12) break;
    after += g;
    p += 1 + g;
  }
  const total = inner + after;
  if (after < 6 || total < 9 || total > 12) return -1;
  return canEnd(text, p) ? p : -1;
}

/** Shape 4 core: exactly 3-3-4 digits with one separator, from `p`. */
function matchThreeThreeFour(text: string, p: number): number {
  const sep = text.charCodeAt(p + 3);
  if (!isSep(sep)) return -1;
  if (countDigits(text, p, 3) !== 3 || countDigits(text, p + 4, 3) !== 3) return -1;
  if (text.charCodeAt(p + 7) !== sep || countDigits(text, p + 8, 4) !== 4) return -1;
  return canEnd(text, p + 12) ? p + 12 : -1;
}

/** Shape 4, optionally after a "1" country code, from digit `i`. */
function matchNorthAmerican(text: string, i: number): number {
  const c1 = text.charCodeAt(i + 1);
  if (text.charCodeAt(i) === 49 && isSep(c1)) {
    if (c1 === SPACE && text.charCodeAt(i + 2) === LPAREN) return matchParenthesised(text, i + 2);
    const end = matchThreeThreeFour(text, i + 2);
    if (end !== -1 && text.charCodeAt(i + 5) === c1) return end;
    return -1;
  }
  return matchThreeThreeFour(text, i);
}

/** Shape 5, from the trunk '0' at `i`. */
function matchNational(text: string, i: number): number {
  const first = countDigits(text, i, 12);
  if (first > 12) return -1;
  const sep = text.charCodeAt(i + first);
  const bare = first >= 10 && first <= 11 && canEnd(text, i + first) ? i + first : -1;
  if (sep === SLASH) return matchAreaSlashNumber(text, i, first);
  if (!isSep(sep) || !isDigit(text.charCodeAt(i + first + 1)) || first < 2 || first > 5) return bare;
  let digits = first;
  let groups = 1;
  let second = 0;
  let third = 0;
  let longest = first;
  let p = i + first;
  while (text.charCodeAt(p) === sep) {
    const g = countDigits(text, p + 1, 8);
    if (g < 2 || g > 8 || digits + g > 12) break;
    digits += g;
    p += 1 + g;
    groups++;
    if (groups === 2) second = g;
    if (groups === 3) third = g;
    if (g > longest) longest = g;
  }
  if (digits < 9) return -1;
  // "01-02-2024-12": day, month, four-digit year
  if (first === 2 && second === 2 && third === 4) {
    const century = text.slice(i + 6, i + 8);
    if (century === '19' || century === '20') return -1;
  }
  if (sep === DOT && groups === 4 && longest <= 3) return -1; // zero-padded IPv4 quad
  return canEnd(text, p) ? p : -1;
}

/** Shape 5 with a slash: exactly "area/number" ("089/12345678"); a second slash makes it a date. */
function matchAreaSlashNumber(text: string, i: number, area: number): number {
  if (area < 2 || area > 5) return -1;
  const g = countDigits(text, i + area + 1, 10);
  const total = area + g;
  const end = i + area + 1 + g;
  if (g < 4 || total < 9 || total > 12 || text.charCodeAt(end) === SLASH) return -1;
  return canEnd(text, end) ? end : -1;
}

function matchPhone(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === PLUS) return matchInternational(text, i + 1, false);
  if (c === LPAREN) return matchParenthesised(text, i);
  if (c === ZERO) {
    const c1 = text.charCodeAt(i + 1);
    if (c1 === ZERO) return matchInternational(text, i + 2, true);
    return isNonZeroDigit(c1) ? matchNational(text, i) : -1;
  }
  return matchNorthAmerican(text, i);
}

// Candidates, found natively: one character that is not a word character or '+' (it stands in
// for a lookbehind, which makes the engine crawl), then '+' and two digits (perhaps split by a
// separator or '('), a closed "(digits)", a trunk "0", three digits and a separator (3-3-4), or
// "1", a separator and three digits or '('. The shapes above are then checked in matchPhone.
const CANDIDATE = /[^\w+](?:\+\d[ .-]?\(?\d|\(\d{1,5}\)|0\d|\d{3}[ .-]\d|1[ .-](?:\d{3}|\())/g;

function tryAt(text: string, i: number, out: Span[]): number {
  const end = canStart(text, i) ? matchPhone(text, i) : -1;
  if (end !== -1) out.push({ start: i, end, kind: 'phone' });
  return end;
}

export function findPhones(text: string, out: Span[]): void {
  const re = new RegExp(CANDIDATE.source, 'g');
  const c0 = text.charCodeAt(0);
  if (isDigit(c0) || c0 === PLUS || c0 === LPAREN) {
    const end = tryAt(text, 0, out); // no character before the text's first one
    if (end !== -1) re.lastIndex = end;
  }
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const i = m.index + 1;
    const end = tryAt(text, i, out);
    // On failure resume at i: the next candidate needs a non-word character before it, so it can
    // never start inside this digit run.
    re.lastIndex = end !== -1 ? end : i;
  }
}
