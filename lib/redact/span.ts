// A candidate match found by one detector: [start, end) in UTF-16 code units.
export type PiiKind = 'email' | 'iban' | 'card' | 'phone' | 'ip';

export interface Span {
  start: number;
  end: number;
  kind: PiiKind;
}
