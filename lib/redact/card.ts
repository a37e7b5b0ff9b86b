// Payment-card detector (DESIGN: "Redaction"): 12–19 digits and the Luhn checksum, and either a
// network's IIN prefix with a length that network uses (iin.ts: the full table, JCB 1800/2131
// 15-digit and 12-digit Maestro included), or a card word close before it (context.ts: "card",
// "cc", "credit card", "Kreditkarte", "carte" …), which makes any Luhn-valid 12–19 digits a card
// ("card 3521 …", as generators and regional schemes write them).
//
// Shapes: one unbroken run of 12–19 digits ("4111111111111111"), or groups joined by one
// consistent separator, space or dash, whose first group has four digits and whose middle groups
// have 3–6 ("4111 1111 1111 1111", "3782-822463-10005"). A spaced card may be followed by more
// spaced digits (a CVV): the longest valid prefix of the groups wins. A dashed one may not
// ("4111-1111-1111-1111-2222" is an ID).
// Not cards: a 13-digit millisecond timestamp (UATP, the only network starting with 1, is 15
// digits), runs of 20+ digits, digits glued to letters, to a '+' or to a decimal point, part of a
// longer run of groups after a negative word ("tracking 9400 1112 0202 3344 5566 77"), and anything
// after the 8th failed start in one long run of space-separated groups (a numeric dump; see
// MAX_FAILED_STARTS_IN_RUN).
//
// Candidates come from one native regex pass; each then reads at most 19 digits plus separators
// into a fixed scratch buffer (no allocation), and the search resumes after it: linear time.
import type { Reach, Span } from './span';
import { DASH, DOT, PLUS, SPACE, isDigit, isWordChar } from './chars';
import { CONTEXT_REACH, CTX_CARD, CTX_NEGATIVE, MAX_RUN_BACK, contextBefore, numberRunStart } from './context';
import { issuerFits, mayBeIssued } from './iin';

const COMMA = 44;
const MAX_DIGITS = 19;

/**
 * After: 19 digits with at most 6 separators (groups of 3+ but the last), then a group that does not
 * fit read to its 7th character and `canEnd`'s two. (A longer digit run is no card: deciding that
 * needs only its first 20 digits.) Before: the start of the run of groups it is in, at most
 * MAX_RUN_BACK back, and the context words before that.
 */
export const CARD_REACH: Reach = { before: MAX_RUN_BACK + CONTEXT_REACH, after: MAX_DIGITS + 6 + 8 + 2 };

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

/** 12–19 digits, Luhn, and (unless a card word stands before them) a network's prefix and length. */
function validDigits(d: ArrayLike<number>, len: number, anyIssuer: boolean): boolean {
  return len >= 12 && len <= MAX_DIGITS && (anyIssuer || issuerFits(d, len)) && luhn(d, len);
}

/** True for a card number given as bare digits, e.g. "4111111111111111" (by issuer: no context). */
export function isValidCard(digits: string): boolean {
  if (!/^[0-9]{12,19}$/.test(digits)) return false;
  const d = Array.from(digits, (ch) => ch.charCodeAt(0) - 48);
  return validDigits(d, d.length, false);
}

// Scratch space, reused by every call (detection is synchronous).
const digits = new Uint8Array(MAX_DIGITS);
const groupEnds = new Int32Array(MAX_DIGITS);
const groupTotals = new Int32Array(MAX_DIGITS);

/** Could any issuer start with the four digits at `i`? A cheap filter before reading groups. */
function maybeIssuer(text: string, i: number): boolean {
  for (let k = 0; k < 4; k++) digits[k] = text.charCodeAt(i + k) - 48;
  return mayBeIssued(digits);
}

/** May a card start at `i`? Not glued to a word, not after '+' (a phone), not inside "3.14" or "1,234". */
function canStart(text: string, i: number): boolean {
  const prev = text.charCodeAt(i - 1);
  if (isWordChar(prev) || prev === PLUS) return false;
  return !((prev === DOT || prev === COMMA || prev === DASH) && isDigit(text.charCodeAt(i - 2)));
}

/** May a card end at `e`? A space may be followed by more digits (a CVV); a dash, dot or comma not. */
function canEnd(text: string, e: number): boolean {
  const c = text.charCodeAt(e);
  if (isWordChar(c)) return false;
  return !((c === DOT || c === COMMA || c === DASH) && isDigit(text.charCodeAt(e + 1)));
}

/**
 * End of a card starting at digit `i` whose first digit run ends at `runEnd`, or -1. With
 * `anyIssuer` (a card word stands before it) any prefix will do.
 */
function matchCard(text: string, i: number, runEnd: number, anyIssuer: boolean): number {
  const runLen = runEnd - i;
  if (runLen >= 12 && runLen <= MAX_DIGITS) {
    for (let k = 0; k < runLen; k++) digits[k] = text.charCodeAt(i + k) - 48;
    return canEnd(text, runEnd) && validDigits(digits, runLen, anyIssuer) ? runEnd : -1;
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
    if (canEnd(text, groupEnds[k]) && validDigits(digits, groupTotals[k], anyIssuer)) return groupEnds[k];
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

/** End of the card starting at digit `i` (first digit run ending at `runEnd`), or -1. */
function cardAt(text: string, i: number, runEnd: number): number {
  if (!canStart(text, i)) return -1;
  let end = maybeIssuer(text, i) ? matchCard(text, i, runEnd, false) : -1;
  if (end !== -1) {
    // part of a longer run of digit groups after "tracking", "order" … is part of that number
    const start = numberRunStart(text, i);
    const runsOn = (text.charCodeAt(end) === SPACE || text.charCodeAt(end) === DASH) && isDigit(text.charCodeAt(end + 1));
    if ((start < i || runsOn) && contextBefore(text, start) & CTX_NEGATIVE) return -1;
    return end;
  }
  // any Luhn-valid 12–19 digits after a card word ("card 3521 …", "cc 0604 …"); the context is
  // read only for numbers that pass Luhn, one in ten
  end = matchCard(text, i, runEnd, true);
  return end !== -1 && contextBefore(text, numberRunStart(text, i)) & CTX_CARD ? end : -1;
}

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
    const end = cardAt(text, i, runEnd);
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
