// Recall and precision of a detector on the labelled corpus, per kind, by span.
//
// - A labelled span is recalled when detected spans of its kind cover every letter and digit of it
//   (punctuation at its edges, e.g. the "(" of "(415) 555-0132", may stay). Redacted under another
//   kind's placeholder counts as missed for its own kind.
// - A detected span is correct when it overlaps a labelled span of its kind.
// - A negative (date, amount, order number …) is hit when any detected span overlaps it.
import type { PiiKind, Span } from '../../lib/redact/span';
import type { LabelledMessage, NegativeClass } from './generate-pii-corpus';

export const KINDS: readonly PiiKind[] = ['email', 'iban', 'card', 'phone', 'ip'];

export interface KindScore {
  labelled: number;
  recalled: number;
  detected: number;
  correct: number;
  /** percent, one decimal */
  recall: number;
  precision: number;
}

export interface CorpusScore {
  messages: number;
  chars: number;
  kinds: Record<PiiKind, KindScore>;
  /** per negative class: how many there were and how many a detected span touched */
  negatives: Record<string, { total: number; hit: number }>;
  /** a few missed spans and false detections per kind, for reading */
  missed: Record<PiiKind, string[]>;
  falsePositives: Record<PiiKind, string[]>;
}

const isAlnum = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122);
const pct = (a: number, b: number) => (b === 0 ? 100 : Math.round((1000 * a) / b) / 10);
const SAMPLES = 12;

export function scoreCorpus(corpus: readonly LabelledMessage[], detect: (text: string) => Span[]): CorpusScore {
  const kinds = Object.fromEntries(KINDS.map((k) => [k, { labelled: 0, recalled: 0, detected: 0, correct: 0, recall: 0, precision: 0 }])) as Record<PiiKind, KindScore>;
  const missed = Object.fromEntries(KINDS.map((k) => [k, [] as string[]])) as Record<PiiKind, string[]>;
  const falsePositives = Object.fromEntries(KINDS.map((k) => [k, [] as string[]])) as Record<PiiKind, string[]>;
  const negatives: Record<string, { total: number; hit: number }> = {};
  let chars = 0;

  for (const msg of corpus) {
    const { text } = msg;
    chars += text.length;
    const found = detect(text);
    const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;

    for (const g of msg.spans) {
      const s = kinds[g.kind];
      s.labelled++;
      const same = found.filter((d) => d.kind === g.kind && overlaps(d, g));
      let covered = same.length > 0;
      for (let i = g.start; covered && i < g.end; i++) {
        if (isAlnum(text.charCodeAt(i)) && !same.some((d) => d.start <= i && i < d.end)) covered = false;
      }
      if (covered) s.recalled++;
      else if (missed[g.kind].length < SAMPLES) {
        const got = found.filter((d) => overlaps(d, g)).map((d) => `${d.kind}:${JSON.stringify(text.slice(d.start, d.end))}`);
        missed[g.kind].push(`${msg.locale} ${JSON.stringify(text.slice(Math.max(0, g.start - 30), g.end + 10))} → ${got.join(', ') || 'nothing'}`);
      }
    }
    for (const d of found) {
      const s = kinds[d.kind];
      s.detected++;
      if (msg.spans.some((g) => g.kind === d.kind && overlaps(d, g))) s.correct++;
      else if (falsePositives[d.kind].length < SAMPLES) {
        falsePositives[d.kind].push(`${msg.locale} ${JSON.stringify(text.slice(Math.max(0, d.start - 30), d.start))} [${text.slice(d.start, d.end)}]`);
      }
    }
    for (const n of msg.negatives) {
      const c = (negatives[n.kind as NegativeClass] ??= { total: 0, hit: 0 });
      c.total++;
      if (found.some((d) => overlaps(d, n))) c.hit++;
    }
  }
  for (const k of KINDS) {
    kinds[k].recall = pct(kinds[k].recalled, kinds[k].labelled);
    kinds[k].precision = pct(kinds[k].correct, kinds[k].detected);
  }
  return { messages: corpus.length, chars, kinds, negatives, missed, falsePositives };
}
