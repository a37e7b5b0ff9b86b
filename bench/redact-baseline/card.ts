// FROZEN: lib/redact/card.ts as it was before the recall work (commit 803635d), kept only so that
// bench/redact.bench.ts can measure the detectors BEFORE and AFTER on the same corpus and machine.
// Do not edit; do not import from production code.
// Payment-card detector (DESIGN: "Redaction"): 12–19 digits, a known issuer prefix with a length that
// issuer uses, and the Luhn checksum.
//
// Shapes: one unbroken run of 12–19 digits ("4111111111111111"), or groups joined by one
// consistent separator, space or dash, whose first group has four digits and whose middle groups
// have 3–6 ("4111 1111 1111 1111", "3782-822463-10005"). A spaced card may be followed by more
// spaced digits (a CVV): the longest valid prefix of the groups wins. A dashed one may not
// ("4111-1111-1111-1111-2222" is an ID).
// Not cards: a 13-digit millisecond timestamp (no issuer starts with 1), runs of 20+ digits,
// digits glued to letters or to a decimal point, and anything after the 8th failed start in one
// long run of space-separated groups (a numeric dump; see MAX_FAILED_STARTS_IN_RUN).
//
// Candidates come from one native regex pass; each then reads at most 19 digits plus separators
// into a fixed scratch buffer (no allocation), and the search resumes after it: linear time.
import type { Span } from '../../lib/redact/span';
import { DASH, DOT, SPACE, isDigit, isWordChar } from '../../lib/redact/chars';

const COMMA = 44;
const MAX_DIGITS = 19;

/** The number formed by the first `k` digits. */
function prefix(d: ArrayLike<number>, k: number): number {
  let v = 0;
  for (let i = 0; i < k; i++) v = v * 10 + d[i];
  return v;
}

/** Does an issuer use this prefix at this length? `d` holds digit values 0–9. */
function issuerFits(d: ArrayLike<number>, len: number): boolean {
  const p2 = prefix(d, 2);
  const in16to19 = len >= 16 && len <= 19;
  switch (d[0]) {
    case 4: // Visa issues 13–19
      return len >= 13 && len <= 19;
    case 5:
      if (p2 >= 51 && p2 <= 55) return len === 16; // Mastercard
      return len >= 12 && len <= 19; // Maestro 50, 56–59
    case 2: {
      const p4 = prefix(d, 4);
      if (p4 >= 2221 && p4 <= 2720) return len === 16; // Mastercard 2-series
      if (p4 >= 2200 && p4 <= 2204) return in16to19; // Mir
      return false;
    }
    case 3: {
      if (p2 === 34 || p2 === 37) return len === 15; // Amex
      const p3 = prefix(d, 3);
      const p4 = prefix(d, 4);
      if ((p3 >= 300 && p3 <= 305) || p4 === 3095 || p2 === 36 || p2 === 38 || p2 === 39) {
        return len >= 14 && len <= 19; // Diners Club
      }
      if (p4 >= 3528 && p4 <= 3589) return in16to19; // JCB
      return false;
    }
    case 6: // Discover 6011/644–649/65, UnionPay 62, RuPay 60, Maestro 56–69
      return len >= 12 && len <= 19;
    case 9:
      return prefix(d, 4) === 9792 && len === 16; // Troy
    default: // 0, 1 (UATP, timestamps), 7, 8
      return false;
  }
}

function luhn(d: ArrayLike<number>, len: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = len - 1; i >= 0; i--) {
    let v = d[i];
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
    double = !double;
  }
  return sum % 10 === 0;
}

function validDigits(d: ArrayLike<number>, len: number): boolean {
  return len >= 12 && len <= MAX_DIGITS && issuerFits(d, len) && luhn(d, len);
}

/** True for a card number given as bare digits, e.g. "4111111111111111". */
export function isValidCard(digits: string): boolean {
  if (!/^[0-9]{12,19}$/.test(digits)) return false;
  const d = Array.from(digits, (ch) => ch.charCodeAt(0) - 48);
  return validDigits(d, d.length);
}

// Scratch space, reused by every call (detection is synchronous).
const digits = new Uint8Array(MAX_DIGITS);
const groupEnds = new Int32Array(MAX_DIGITS);
const groupTotals = new Int32Array(MAX_DIGITS);

/** Could any issuer start with the four digits at `i`? A cheap filter before reading groups. */
function maybeIssuer(text: string, i: number): boolean {
  for (let k = 0; k < 4; k++) digits[k] = text.charCodeAt(i + k) - 48;
  for (let len = 12; len <= MAX_DIGITS; len++) if (issuerFits(digits, len)) return true;
  return false;
}

/** May a card start at `i`? Not glued to a word, not inside a number like "3.14" or "1,234". */
function canStart(text: string, i: number): boolean {
  const prev = text.charCodeAt(i - 1);
  if (isWordChar(prev)) return false;
  return !((prev === DOT || prev === COMMA || prev === DASH) && isDigit(text.charCodeAt(i - 2)));
}

/** May a card end at `e`? A space may be followed by more digits (a CVV); a dash, dot or comma not. */
function canEnd(text: string, e: number): boolean {
  const c = text.charCodeAt(e);
  if (isWordChar(c)) return false;
  return !((c === DOT || c === COMMA || c === DASH) && isDigit(text.charCodeAt(e + 1)));
}

/** End of a card starting at digit `i` whose first digit run ends at `runEnd`, or -1. */
function matchCard(text: string, i: number, runEnd: number): number {
  const runLen = runEnd - i;
  if (runLen >= 12 && runLen <= MAX_DIGITS) {
    for (let k = 0; k < runLen; k++) digits[k] = text.charCodeAt(i + k) - 48;
    return canEnd(text, runEnd) && validDigits(digits, runLen) ? runEnd : -1;
  }
  if (runLen !== 4) return -1;
  const sep = text.charCodeAt(runEnd);
  if (sep !== SPACE && sep !== DASH) return -1;
  for (let k = 0; k < 4; k++) digits[k] = text.charCodeAt(i + k) - 48;
  let total = 4;
  let groups = 0;
  let p = runEnd;
  while (text.charCodeAt(p) === sep) {
    let q = p + 1;
    while (q - p <= 6 && isDigit(text.charCodeAt(q))) q++;
    const g = q - p - 1;
    if (g === 0 || isDigit(text.charCodeAt(q)) || total + g > MAX_DIGITS) break;
    for (let k = 0; k < g; k++) digits[total + k] = text.charCodeAt(p + 1 + k) - 48;
    total += g;
    p = q;
    groupEnds[groups] = p;
    groupTotals[groups] = total;
    groups++;
    if (g < 3) break; // only the last group may be shorter than three digits
  }
  for (let k = groups - 1; k >= 0 && groupTotals[k] >= 12; k--) {
    if (canEnd(text, groupEnds[k]) && validDigits(digits, groupTotals[k])) return groupEnds[k];
  }
  return -1;
}

// Candidates, found natively: four digits, then a separator and three more or eight more digits.
// No boundary assertion in the pattern (those make the engine crawl); canStart checks the
// character before, and a candidate inside a digit run fails it and skips the run.
const CANDIDATE = /\d\d\d\d(?:[ -]\d\d\d|\d{8})/g;

// After this many failed starts in a row inside one run of space-separated digit groups, the rest
// of the run is skipped: a card buried deep in a numeric dump ("4111 4111 4111 …") is not a card in
// prose, and sliding a 19-digit window along such a run is the detector's only costly case.
const MAX_FAILED_STARTS_IN_RUN = 8;

export function findCards(text: string, out: Span[]): void {
  const n = text.length;
  const re = new RegExp(CANDIDATE.source, 'g');
  let lastFailEnd = -1;
  let failStreak = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const i = m.index;
    let runEnd = i + 4;
    while (runEnd < n && isDigit(text.charCodeAt(runEnd))) runEnd++;
    const end = canStart(text, i) && maybeIssuer(text, i) ? matchCard(text, i, runEnd) : -1;
    if (end !== -1) {
      out.push({ start: i, end, kind: 'card' });
      re.lastIndex = end;
      lastFailEnd = -1;
      continue;
    }
    failStreak = i === lastFailEnd + 1 && text.charCodeAt(lastFailEnd) === SPACE ? failStreak + 1 : 0;
    lastFailEnd = runEnd;
    let next = runEnd;
    if (failStreak >= MAX_FAILED_STARTS_IN_RUN) {
      while (text.charCodeAt(next) === SPACE && isDigit(text.charCodeAt(next + 1))) {
        next += 2;
        while (next < n && isDigit(text.charCodeAt(next))) next++;
      }
      failStreak = 0;
      lastFailEnd = -1;
    }
    re.lastIndex = next;
  }
}
