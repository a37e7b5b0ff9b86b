// The redactor as it was before the recall work: today's email, IBAN and IP detectors (unchanged by that
// issue) with the frozen card and phone detectors beside this file, overlaps settled as in
// lib/redact/detect.ts. Only bench/redact.bench.ts uses it, to print BEFORE next to AFTER.
import { findEmails } from '../../lib/redact/email';
import { findIbans } from '../../lib/redact/iban';
import { findIps } from '../../lib/redact/ip';
import type { PiiKind, Span } from '../../lib/redact/span';
import { findCards } from './card';
import { findPhones } from './phone';

const PLACEHOLDERS: Readonly<Record<PiiKind, string>> = {
  email: '<EMAIL>',
  iban: '<IBAN>',
  card: '<CARD>',
  phone: '<PHONE>',
  ip: '<IP>',
};
const STRENGTH: Readonly<Record<PiiKind, number>> = { iban: 4, card: 3, email: 2, ip: 2, phone: 1 };

export function detectPiiBefore(text: string): Span[] {
  const spans: Span[] = [];
  findEmails(text, spans);
  findIbans(text, spans);
  findCards(text, spans);
  findIps(text, spans);
  findPhones(text, spans);
  if (spans.length < 2) return spans;
  spans.sort((x, y) => x.start - y.start || y.end - x.end);
  const byPriority = spans.slice().sort((x, y) => STRENGTH[y.kind] - STRENGTH[x.kind] || y.end - y.start - (x.end - x.start) || x.start - y.start);
  const base = spans[0].start;
  let maxEnd = 0;
  for (const s of spans) if (s.end > maxEnd) maxEnd = s.end;
  const claimed = new Uint8Array(maxEnd - base);
  const kept: Span[] = [];
  for (const s of byPriority) {
    let free = true;
    for (let k = s.start - base; k < s.end - base; k++) {
      if (claimed[k]) {
        free = false;
        break;
      }
    }
    if (!free) continue;
    claimed.fill(1, s.start - base, s.end - base);
    kept.push(s);
  }
  return kept.sort((x, y) => x.start - y.start);
}

export function redactBefore(text: string): string {
  const spans = detectPiiBefore(text);
  if (spans.length === 0) return text;
  let out = '';
  let last = 0;
  for (const s of spans) {
    out += text.slice(last, s.start) + PLACEHOLDERS[s.kind];
    last = s.end;
  }
  return out + text.slice(last);
}
