// IBAN detector (DESIGN: "Redaction"): country code from the IBAN registry, that country's exact length,
// and the ISO 13616 mod-97 check (remainder 1). Case-insensitive; a single space or dash is
// allowed between groups of four ("GB82 WEST 1234 …", "de89-3704-…"), or none at all.
//
// Candidates come from one native regex for "two letters + two digits" at a word start; each
// candidate then reads at most 34 characters, so the pass is linear.
import type { Reach, Span } from './span';
import { DASH, SPACE, isAsciiAlnum, isDigit, isWordChar } from './chars';

/** IBAN length per country (SWIFT IBAN registry). */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IR: 26,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** Mod-97 of the rearranged IBAN (`compact`: letters and digits only, any case). */
function ibanRemainder(compact: string): number {
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let r = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    if (isDigit(c)) r = (r * 10 + (c - 48)) % 97;
    else r = (r * 100 + ((c | 32) - 87)) % 97; // a/A = 10 … z/Z = 35
  }
  return r;
}

/** True for a complete IBAN without separators, e.g. "GB82WEST12345698765432". */
export function isValidIban(compact: string): boolean {
  if (compact.length < 15 || compact.length > 34) return false;
  if (registeredLength(compact, 0) !== compact.length) return false;
  if (!isDigit(compact.charCodeAt(2)) || !isDigit(compact.charCodeAt(3))) return false;
  for (let i = 4; i < compact.length; i++) {
    if (!isAsciiAlnum(compact.charCodeAt(i))) return false;
  }
  return ibanRemainder(compact) === 1;
}

// The same table keyed by the two upper-cased char codes, so lookups allocate nothing.
const LENGTH_BY_CODES = new Map<number, number>(Object.entries(IBAN_LENGTHS).map(([cc, len]) => [(cc.charCodeAt(0) << 8) | cc.charCodeAt(1), len]));

function registeredLength(text: string, i: number): number | undefined {
  return LENGTH_BY_CODES.get(((text.charCodeAt(i) & ~32) << 8) | (text.charCodeAt(i + 1) & ~32));
}

/** 34 characters with a separator after every four (8), then the character after it; `\b` reads one before. */
export const IBAN_REACH: Reach = { before: 1, after: 34 + 8 + 2 };

// Candidate starts, found natively: two letters and two digits at a word start (always 4 chars).
const CANDIDATE = /\b[A-Za-z]{2}[0-9]{2}/g;

export function findIbans(text: string, out: Span[]): void {
  const re = new RegExp(CANDIDATE.source, 'g');
  while (re.test(text)) {
    const start = re.lastIndex - 4;
    const len = registeredLength(text, start);
    if (len === undefined) continue;
    let p = start;
    let count = 0;
    while (count < len) {
      const c = text.charCodeAt(p);
      if (isAsciiAlnum(c)) {
        count++;
        p++;
      } else if ((c === SPACE || c === DASH) && count % 4 === 0 && isAsciiAlnum(text.charCodeAt(p + 1))) {
        p++;
      } else {
        break;
      }
    }
    if (count !== len || isWordChar(text.charCodeAt(p))) continue;
    if (ibanRemainder(stripSeparators(text, start, p)) !== 1) continue;
    out.push({ start, end: p, kind: 'iban' });
    re.lastIndex = p;
  }
}

function stripSeparators(text: string, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== DASH) s += text[i];
  }
  return s;
}
