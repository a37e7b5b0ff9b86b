// The five detectors together (DESIGN: Redaction): every detected span of a text, overlaps
// settled by the stronger validation. `redact` (index.ts) and the streaming redactor (stream.ts)
// both read spans from here.
import { CARD_REACH, findCards } from './card';
import { EMAIL_REACH, findEmails } from './email';
import { IBAN_REACH, findIbans } from './iban';
import { IP_REACH, findIps } from './ip';
import { PHONE_REACH, findPhones } from './phone';
import type { PiiKind, Reach, Span } from './span';
import { countRedaction } from './tally';

export const PLACEHOLDERS: Readonly<Record<PiiKind, string>> = {
  email: '<EMAIL>',
  iban: '<IBAN>',
  card: '<CARD>',
  phone: '<PHONE>',
  ip: '<IP>',
};

/** How far any detector reads around a match: the largest reach of the five (an email's). */
export const DETECTOR_REACH: Reach = {
  before: Math.max(EMAIL_REACH.before, IBAN_REACH.before, CARD_REACH.before, PHONE_REACH.before, IP_REACH.before),
  after: Math.max(EMAIL_REACH.after, IBAN_REACH.after, CARD_REACH.after, PHONE_REACH.after, IP_REACH.after),
};

// When two detectors claim overlapping text, the stronger validation wins: checksummed IBANs and
// cards over everything, structural emails and IPs over phones (which have no checksum).
const STRENGTH: Readonly<Record<PiiKind, number>> = { iban: 4, card: 3, email: 2, ip: 2, phone: 1 };

function candidates(text: string): Span[] {
  const spans: Span[] = [];
  findEmails(text, spans);
  findIbans(text, spans);
  findCards(text, spans);
  findIps(text, spans);
  findPhones(text, spans);
  return spans;
}

/** Every detected PII span in `text`, non-overlapping and sorted by start. */
export function detectPii(text: string): Span[] {
  return resolveOverlaps(candidates(text));
}

/**
 * Like `detectPii`, but only spans that start at `from` or later take part: `text[0, from)` is
 * context a streaming redactor has already given out (its spans were settled then).
 */
export function detectPiiFrom(text: string, from: number): Span[] {
  const all = candidates(text);
  return resolveOverlaps(from > 0 ? all.filter((s) => s.start >= from) : all);
}

/** Strongest first, then longest, then leftmost. */
function byPriority(x: Span, y: Span): number {
  return STRENGTH[y.kind] - STRENGTH[x.kind] || y.end - y.start - (x.end - x.start) || x.start - y.start;
}

function resolveOverlaps(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  spans.sort((x, y) => x.start - y.start || y.end - x.end);
  let overlapping = false;
  for (let i = 1; i < spans.length; i++) {
    if (spans[i].start < spans[i - 1].end) {
      overlapping = true;
      break;
    }
  }
  if (!overlapping) return spans;

  // Each run of overlapping spans is settled on its own: a span's fate depends only on the spans
  // it shares characters with. Text dense with overlapping pairs (every address literal is an
  // email and an IP) then costs a small sort per pair, not one sort of all spans.
  const kept: Span[] = [];
  let i = 0;
  while (i < spans.length) {
    let end = spans[i].end;
    let j = i + 1;
    while (j < spans.length && spans[j].start < end) {
      if (spans[j].end > end) end = spans[j].end;
      j++;
    }
    if (j === i + 1) kept.push(spans[i]);
    else if (j === i + 2) kept.push(byPriority(spans[i], spans[i + 1]) <= 0 ? spans[i] : spans[i + 1]);
    else settleGroup(spans.slice(i, j), end, kept);
    i = j;
  }
  return kept;
}

/**
 * Appends to `kept`, in order of start, the spans of `group` (sorted by start, overlapping, all
 * ending by `end`) that win: in order of priority, a span is kept only if none of its characters is
 * already claimed. Each detector's spans are bounded in length, so marking is linear.
 */
function settleGroup(group: Span[], end: number, kept: Span[]): void {
  const base = group[0].start;
  const claimed = new Uint8Array(end - base);
  const won: Span[] = [];
  for (const s of group.sort(byPriority)) {
    let free = true;
    for (let k = s.start - base; k < s.end - base; k++) {
      if (claimed[k]) {
        free = false;
        break;
      }
    }
    if (!free) continue;
    claimed.fill(1, s.start - base, s.end - base);
    won.push(s);
  }
  won.sort((x, y) => x.start - y.start);
  for (const s of won) kept.push(s);
}

/** `text[from, to)` with each span inside it replaced by its placeholder (spans sorted, non-overlapping). */
export function replaceSpans(text: string, spans: readonly Span[], from = 0, to = text.length): string {
  if (spans.length === 0 && from === 0 && to === text.length) return text;
  // Plain concatenation: V8 builds a rope and flattens it once; measured faster than collecting
  // parts for join() even with tens of thousands of replacements.
  let out = '';
  let last = from;
  for (const s of spans) {
    if (s.start < from) continue;
    if (s.start >= to) break;
    out += text.slice(last, s.start);
    out += PLACEHOLDERS[s.kind];
    countRedaction(s.kind);
    last = s.end;
  }
  return out + text.slice(last, to);
}
