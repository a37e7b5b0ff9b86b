// Phone-number detector (DESIGN: "Redaction"). Phone numbers have no checksum, so this is the weakest
// detector: any IBAN, card, email or IP claiming the same text wins over it.
//
// A phone is detected when it has a phone's *format* (shapes 1–5), or a phone's *shape* right
// after a phone word (shape 6; context.ts):
//
//  1. International, `+`: "+44 20 7946 0958", "+1-415-555-0132", "+14155550132",
//     "+1 (415) 555-0132", "+49 (0)30 1234567". Country code starts 1–9; 8–15 digits in all
//     (E.164), not counting a "(0)" trunk marker; groups joined by one space, dash or dot, with at
//     most one parenthesised group.
//  2. International, `00`: "0044 20 7946 0958" — like 1 after the "00", but it must contain a
//     separator (a bare "0012345678" is far more often a zero-padded ID).
//  3. Parenthesised area code: "(415) 555-0132", "(030) 1234567", "(0)30 1234567", "(37) 788-063"
//     — 1–5 digits in the parentheses (a single digit only if it is 0), at least 6 digits after
//     them, 8–13 in all.
//  4. North-American 3-3-4: "415-555-0132", "415.555.0132", "415 555 0132", optionally after
//     "1-" / "1 " / "1." — one consistent separator, exactly 3, 3 and 4 digits.
//  5. National with trunk 0: "06 12 34 56 78", "030 1234567", "020 7946 0958", "018049 56368" —
//     starts "0" then 1–9; one consistent separator (space, dash or dot); first group 2–6 digits,
//     later groups 2–8; 9–13 digits in all. Or "area/number" with exactly one slash
//     ("089/12345678"). Or one unbroken run of 10–11 digits starting 0[1-9] ("0612345678").
//  6. After a phone word ("Phone:", "call me on", "Mobile", "Tel.", "my number is", "WhatsApp",
//     "Handy", "portable", "móvil" …): an optional "(area)", then groups of at least two digits
//     joined by single spaces, dashes or dots, 7–15 digits in all (an unbroken run 7–12):
//     "Phone:\n467 3395", "call me on 9472 7916", "Mobile: 723 813 266", "at 71-33-52-22".
//
// Any shape may end in an extension ("259.735.7502x459", "(551) 389-3688 x0018",
// "415-555-0132 ext. 12"), which is redacted with it, or be followed by a "-Office"-style label,
// which is kept. A negative word before the number ("Order", "Invoice", "ref", "tracking",
// "Kundennummer" …) wins over shapes 2–6: "Order 0612345678" stays. Only a '+' number is a phone
// whatever stands before it.
//
// Not phones (by construction):
//  - plain digit runs without +, 00, a trunk 0, parentheses or a phone word: "12345678", a bare
//    10-digit "4155550132", 13-digit timestamps even after a phone word;
//  - dates and times: "2024-01-15", "15.01.2024", "01/15/2024" (a slash only in "area/number"),
//    "12:34:56" (colon is no separator); 2-2-4 groups whose last looks like a year (19xx/20xx)
//    are rejected even with a trunk 0 ("01-02-2024-12"); after a phone word, no 4-2-2 or 2-2-4;
//  - zero-padded IPv4-like quads "01.02.03.004" (four dotted groups of at most 3 digits);
//  - version numbers "1.2.3", "v10.4.12", IPs, UUIDs and hex: a number glued to a letter, or to
//    another number by '.', '-', '/' or ':', neither starts nor ends a phone; amounts with a
//    decimal comma ("1.234.567,89");
//  - national numbers without a trunk 0 and without a phone word (Spanish "612 34 56 78", Danish
//    "70 31 01 33"): a bare digit group is ambiguous — a documented miss; written after "Tel." or
//    "call me on", or with +34, they are caught.
//
// An international number takes following spaced groups while it stays within 15 digits (a
// one-digit group only right after the country code), so "+1 415 555 0132 12 times" loses its
// "12" too: over-redacting a neighbour beats leaking part of a number.
// A spaced phone may be followed by another spaced number ("call 415 555 0132 2 times"), but a
// dashed/dotted one may not run on ("415-555-0132-99" is an ID). Candidates come from two native
// regex passes (shapes 1–5; runs of digit groups for shape 6, tried only where a run starts);
// each candidate reads a bounded number of characters (≤ 15 digits, the context words at most
// PHONE_REACH.before back): linear time.
import type { Reach, Span } from './span';
import { COLON, DASH, DOT, LPAREN, PLUS, RPAREN, SLASH, SPACE, ZERO, countDigits, isAsciiAlnum, isAsciiLetter, isDigit, isHexDigit, isWordChar } from './chars';
import { CONTEXT_REACH, CTX_NEGATIVE, CTX_PHONE, MAX_RUN_BACK, contextBefore, numberRunStart } from './context';

const MAX_E164 = 15;
const COMMA = 44;
const MAX_EXTENSION = 6;
const MAX_LABEL = 12;
/** An unbroken run after a phone word: 13+ digits are a timestamp or an ID more often than a phone. */
const MAX_UNBROKEN = 12;

/**
 * After: '+', 15 digits (16 with a "(0)" trunk), a separator between every two groups, one "( )"
 * and its separators, then a digit count that reads 16 past a group's start, and at the end either
 * an extension (" ext. " and 7 digits read, `canEnd`'s two) or a "-Label" (13 letters read, one
 * more). Before: the start of the run of digit groups the number is in, and the context words
 * before that.
 */
export const PHONE_REACH: Reach = {
  before: MAX_RUN_BACK + CONTEXT_REACH,
  after: 1 + (MAX_E164 + 1) * 2 + 4 + MAX_E164 + 1 + Math.max(6 + MAX_EXTENSION + 1 + 2, 1 + MAX_LABEL + 1 + 1),
};

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

/** End of an extension right after `p` ("x459", " x 12", " ext. 12", "ext12"), or -1. */
function extensionEnd(text: string, p: number): number {
  let q = p;
  if (text.charCodeAt(q) === SPACE) q++;
  const c = text.charCodeAt(q) | 32;
  if (c === 120) {
    q++; // x
  } else if (c === 101 && (text.charCodeAt(q + 1) | 32) === 120 && (text.charCodeAt(q + 2) | 32) === 116) {
    q += 3; // ext
    if (text.charCodeAt(q) === DOT) q++;
  } else {
    return -1;
  }
  if (q - p >= 2 && text.charCodeAt(q) === SPACE) q++; // " x 12", " ext. 12" (not "0132x 12")
  const g = countDigits(text, q, MAX_EXTENSION);
  if (g < 1 || g > MAX_EXTENSION) return -1;
  return canEnd(text, q + g) ? q + g : -1;
}

/** A "-Office", "-Mobile" label at `p`: a dash, 3–12 letters not all hex digits, then no word character. */
function labelAt(text: string, p: number): boolean {
  if (text.charCodeAt(p) !== DASH) return false;
  let q = p + 1;
  let hexOnly = true;
  while (q - p <= MAX_LABEL + 1 && isAsciiLetter(text.charCodeAt(q))) {
    if (!isHexDigit(text.charCodeAt(q))) hexOnly = false;
    q++;
  }
  return q - p - 1 >= 3 && q - p - 1 <= MAX_LABEL && !hexOnly && !isWordChar(text.charCodeAt(q));
}

/** Where a phone whose digits end at `p` ends: after its extension, at `p`, or -1. */
function finish(text: string, p: number): number {
  const ext = extensionEnd(text, p);
  if (ext !== -1) return ext;
  return canEnd(text, p) || labelAt(text, p) ? p : -1;
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
  return finish(text, q);
}

/** Shape 3, from the '(' at `i`. */
function matchParenthesised(text: string, i: number): number {
  const inner = countDigits(text, i + 1, 5);
  if (inner < 1 || inner > 5 || text.charCodeAt(i + 1 + inner) !== RPAREN) return -1;
  if (inner === 1 && text.charCodeAt(i + 1) !== ZERO) return -1; // "(1) 234 …" is a list item
  let p = i + inner + 2;
  if (text.charCodeAt(p) === SPACE || text.charCodeAt(p) === DASH) p++;
  let g = countDigits(text, p, 9);
  if (g < 2 || g > 9) return -1;
  let after = g;
  p += g;
  while (isSep(text.charCodeAt(p))) {
    g = countDigits(text, p + 1, 8);
    if (g < 2 || g > 8 || inner + after + g > 13) break;
    after += g;
    p += 1 + g;
  }
  const total = inner + after;
  if (after < 6 || total < 8 || total > 13) return -1;
  return finish(text, p);
}

/** Shape 4 core: exactly 3-3-4 digits with one separator, from `p`. */
function matchThreeThreeFour(text: string, p: number): number {
  const sep = text.charCodeAt(p + 3);
  if (!isSep(sep)) return -1;
  if (countDigits(text, p, 3) !== 3 || countDigits(text, p + 4, 3) !== 3) return -1;
  if (text.charCodeAt(p + 7) !== sep || countDigits(text, p + 8, 4) !== 4) return -1;
  return finish(text, p + 12);
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
  const first = countDigits(text, i, 13);
  if (first > 13) return -1;
  const sep = text.charCodeAt(i + first);
  const bare = first >= 10 && first <= 11 ? finish(text, i + first) : -1;
  if (sep === SLASH) return matchAreaSlashNumber(text, i, first);
  if (!isSep(sep) || !isDigit(text.charCodeAt(i + first + 1)) || first < 2 || first > 6) return bare;
  let digits = first;
  let groups = 1;
  let second = 0;
  let third = 0;
  let longest = first;
  let p = i + first;
  while (text.charCodeAt(p) === sep) {
    const g = countDigits(text, p + 1, 8);
    if (g < 2 || g > 8 || digits + g > 13) break;
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
  return finish(text, p);
}

/** Shape 5 with a slash: exactly "area/number" ("089/12345678"); a second slash makes it a date. */
function matchAreaSlashNumber(text: string, i: number, area: number): number {
  if (area < 2 || area > 5) return -1;
  const g = countDigits(text, i + area + 1, 10);
  const total = area + g;
  const end = i + area + 1 + g;
  if (g < 4 || total < 9 || total > 12 || text.charCodeAt(end) === SLASH) return -1;
  return finish(text, end);
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

/**
 * Shape 6, only after a phone word: an optional "(area)", then groups of at least two digits
 * joined by single spaces, dashes or dots, 7–15 digits in all ("467 3395", "9472 7916",
 * "723 813 266", "(37) 788-063", "60-56-85-91", "94727916"). Not a date (4-2-2, 2-2-4 digits), not
 * a dotted quad, not a decimal ("1.234.567,89").
 */
function matchAfterPhoneWord(text: string, i: number): number {
  let p = i;
  let digits = 0;
  let groups = 0;
  let dotsOnly = true;
  let longest = 0;
  let first = 0;
  let second = 0;
  let third = 0;
  if (text.charCodeAt(p) === LPAREN) {
    const inner = countDigits(text, p + 1, 5);
    if (inner < 1 || inner > 5 || text.charCodeAt(p + 1 + inner) !== RPAREN) return -1;
    digits = inner;
    first = inner;
    longest = inner;
    groups = 1;
    dotsOnly = false;
    p += inner + 2;
    if (text.charCodeAt(p) === SPACE || text.charCodeAt(p) === DASH) p++;
  }
  let g = countDigits(text, p, MAX_E164);
  if (g < 2 || digits + g > MAX_E164) return -1;
  if (groups === 0 && g > MAX_UNBROKEN && !isSep(text.charCodeAt(p + g))) return -1; // "call 1732886400000"
  for (;;) {
    digits += g;
    p += g;
    if (groups === 0) first = g;
    else if (groups === 1) second = g;
    else if (groups === 2) third = g;
    if (g > longest) longest = g;
    groups++;
    const sep = text.charCodeAt(p);
    if (!isSep(sep)) break;
    g = countDigits(text, p + 1, MAX_E164);
    if (g < 2 || digits + g > MAX_E164) break;
    if (sep !== DOT) dotsOnly = false;
    p++;
  }
  if (digits < 7) return -1;
  if (groups === 3 && second === 2 && ((first === 4 && third === 2) || (first === 2 && third === 4))) {
    return -1; // 2024-01-15, 15.01.2024
  }
  if (dotsOnly && groups === 4 && longest <= 3) return -1; // an IPv4-like quad
  if (text.charCodeAt(p) === COMMA && isDigit(text.charCodeAt(p + 1))) return -1; // 1.234.567,89
  return finish(text, p);
}

// Candidates for shapes 1–5, found natively: one character that is not a word character or '+'
// (it stands in for a lookbehind, which makes the engine crawl), then '+' and two digits (perhaps
// split by a separator or '('), a closed "(digits)", a trunk "0", three digits and a separator
// (3-3-4), or "1", a separator and three digits or '('. The shapes are then checked in matchPhone.
const CANDIDATE = /[^\w+](?:\+\d[ .-]?\(?\d|\(\d{1,5}\)|0\d|\d{3}[ .-]\d|1[ .-](?:\d{3}|\())/g;

// Candidates for shape 6: a run of digit groups with at least seven characters of digits and
// separators after its first two digits, perhaps after "(area)". The match takes up to 40 more of
// them, so a long run is passed over in a few steps: shape 6 is tried only where a run starts.
const RUN_CANDIDATE = /[^\w+](?:\(\d{1,5}\)[ -]?)?\d\d[\d .-]{5,40}/g;

/** Shape 6 at `i`, the start of a run of digit groups, after a phone word: the end, or -1. */
function tryAfterPhoneWordAt(text: string, i: number, out: Span[]): number {
  if (!canStart(text, i)) return -1;
  const end = matchAfterPhoneWord(text, i);
  if (end === -1 || !(contextBefore(text, i) & CTX_PHONE)) return -1;
  out.push({ start: i, end, kind: 'phone' });
  return end;
}

export function findPhones(text: string, out: Span[]): void {
  // shapes 1–5
  const found: Span[] = [];
  /** starts of runs whose words before are negative (non-decreasing): shape 6 skips them */
  const vetoed: number[] = [];
  let lastEnd = -2; // end of the last phone found whose words were read
  const tryShapeAt = (i: number): number => {
    if (!canStart(text, i)) return -1;
    const end = matchPhone(text, i);
    if (end === -1) return -1;
    // '+' and a country code is a phone whatever the words before it. Any other shape yields to a
    // negative word ("Order 0612345678", "Invoice 415-555-0132"), read before the run of digit
    // groups it is in ("Tracking 9400 1112 0202 …"); a phone right after the last one, one
    // separator between, is in the same run and has the same words before it.
    if (text.charCodeAt(i) !== PLUS) {
      if (i !== lastEnd + 1 || !isSep(text.charCodeAt(lastEnd))) {
        const start = numberRunStart(text, i);
        if (contextBefore(text, start) & CTX_NEGATIVE) {
          if (vetoed[vetoed.length - 1] !== start) vetoed.push(start);
          return -1;
        }
      }
      lastEnd = end;
    }
    found.push({ start: i, end, kind: 'phone' });
    return end;
  };
  const re = new RegExp(CANDIDATE.source, 'g');
  const c0 = text.charCodeAt(0);
  if (isDigit(c0) || c0 === PLUS || c0 === LPAREN) {
    const end = tryShapeAt(0); // no character before the text's first one
    if (end !== -1) re.lastIndex = end;
  }
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const i = m.index + 1;
    const end = tryShapeAt(i);
    // On failure resume at i: the next candidate needs a non-word character before it, so it can
    // never start inside this digit run.
    re.lastIndex = end !== -1 ? end : i;
  }

  // shape 6, where a run starts outside every phone found above and its words were not negative
  const runs = new RegExp(RUN_CANDIDATE.source, 'g');
  let k = 0; // next phone of `found` that may lie at or after the candidate
  let v = 0; // next of `vetoed` that may be at or after the candidate
  const tryRun = (i: number): number => {
    while (k < found.length && found[k].end <= i) k++;
    if (k < found.length && found[k].start <= i) return found[k].end;
    const prev = text.charCodeAt(i - 1);
    if (isSep(prev) && isDigit(text.charCodeAt(i - 2))) return -1; // inside a run
    while (v < vetoed.length && vetoed[v] < i) v++;
    if (vetoed[v] === i) return -1;
    return tryAfterPhoneWordAt(text, i, out);
  };
  if (isDigit(c0) || c0 === LPAREN) {
    const end = tryRun(0);
    if (end !== -1) runs.lastIndex = end;
  }
  while ((m = runs.exec(text)) !== null) {
    const end = tryRun(m.index + 1);
    // On failure go on after the match: later starts in it are inside the same run.
    if (end !== -1) runs.lastIndex = end;
  }
  for (const s of found) out.push(s);
}
