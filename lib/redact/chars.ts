// Character-class tests on UTF-16 code units. charCodeAt past either end returns NaN,
// which fails every test here, so callers need no bounds checks.

export const SPACE = 32;
export const PLUS = 43;
export const DASH = 45;
export const DOT = 46;
export const SLASH = 47;
export const COLON = 58;
export const LPAREN = 40;
export const RPAREN = 41;
export const PERCENT = 37;
export const UNDERSCORE = 95;
export const ZERO = 48;

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAsciiLetter(c: number): boolean {
  const l = c | 32;
  return l >= 97 && l <= 122;
}

export function isAsciiAlnum(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c);
}

/** Letters, digits and `_`: what glues a token to its neighbour. */
export function isWordChar(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c) || c === UNDERSCORE;
}

export function isHexDigit(c: number): boolean {
  if (isDigit(c)) return true;
  const l = c | 32;
  return l >= 97 && l <= 102;
}

/** Number of consecutive ASCII digits from `p`, counting at most `max + 1` (so callers see "too many"). */
export function countDigits(text: string, p: number, max: number): number {
  let q = p;
  const stop = p + max + 1;
  while (q < stop && isDigit(text.charCodeAt(q))) q++;
  return q - p;
}

// Scripts written with spaces between words. Han, kana, Hangul, Thai … are left out on purpose:
// that text often runs straight into an address ("联系anna@example.com") and must stay outside it.
const UNICODE_WORD = /^[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{M}]$/u;

/** A non-ASCII Latin/Greek/Cyrillic letter or a mark (BMP), as used in internationalised addresses. */
export function isUnicodeWordUnit(c: number): boolean {
  return c >= 0x80 && !(c >= 0xd800 && c <= 0xdfff) && UNICODE_WORD.test(String.fromCharCode(c));
}
