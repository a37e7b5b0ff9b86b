// A candidate match found by one detector: [start, end) in UTF-16 code units.
export type PiiKind = 'email' | 'iban' | 'card' | 'phone' | 'ip';

/**
 * How far a detector reads around a match to decide it (DESIGN: Redaction, streamed text): `before`
 * characters before the match's start, and `after` characters from its start on (the match itself
 * and the look-ahead that decides where it ends). A streaming redactor holds back the largest
 * `after` and keeps the largest `before` as context, so a match split across chunks is still
 * found, exactly as in the whole text.
 */
export interface Reach {
  before: number;
  after: number;
}

export interface Span {
  start: number;
  end: number;
  kind: PiiKind;
}
