// The redactor (DESIGN: "Redaction", seed "What gets redacted, and when").
//
// `redact(text)` is the always-on, configuration-free pass applied to a failed attempt's captured
// output: five fixed detectors, each replaced by a typed placeholder, every other character kept.
// `redactText` / `redactMessages` are the broader mechanism for whole prompts and responses: the
// same detectors plus caller-supplied patterns. Nothing calls them unless the engine is asked to
// (off by default; there is no project-level setting).
//
// No runtime dependency: five small hand-written scanners are easier to keep linear-time than any
// general PII library's regexes.
//
// Also here: `createStreamRedactor` (the same five detectors over a stream, holding back a tail so
// a match split across chunks is still caught) and `capFailureText` (the one bound on stored
// failure text).
import { detectPii, PLACEHOLDERS, replaceSpans } from './detect';
import type { PiiKind } from './span';
import { countRedaction } from './tally';

export { detectPii, DETECTOR_REACH, PLACEHOLDERS } from './detect';
export type { PiiKind, Reach, Span } from './span';
export { createStreamRedactor, STREAM_CONTEXT_CHARS, STREAM_HOLD_CHARS, type StreamRedactor, type StreamSecret } from './stream';
export { capFailureText, FAILURE_TEXT_MAX_CHARS } from './cap';
export { redactionCounts } from './tally';

export const DEFAULT_EXTRA_PLACEHOLDER = '<REDACTED>';

export interface RedactMessage {
  role: string;
  content: string;
}

export interface RedactOptions {
  /** Extra patterns to redact besides the five detectors. Their own run time is the caller's concern. */
  extraPatterns?: RegExp[];
  /** Replacement for `extraPatterns` matches (default `<REDACTED>`); the detectors keep their typed placeholders. */
  placeholder?: string;
}

/** `text` with each item's [start, end) replaced by `replacement(item)`; items sorted, non-overlapping. */
function rebuild<T extends { start: number; end: number }>(text: string, items: readonly T[], replacement: (item: T) => string): string {
  if (items.length === 0) return text;
  // Plain concatenation: V8 builds a rope and flattens it once; measured faster than collecting
  // parts for join() even with tens of thousands of replacements.
  let out = '';
  let last = 0;
  for (const it of items) {
    out += text.slice(last, it.start);
    out += replacement(it);
    last = it.end;
  }
  return out + text.slice(last);
}

/** Replace emails, IBANs, card numbers, phone numbers and IP addresses with typed placeholders. */
export function redact(text: string): string {
  return replaceSpans(text, detectPii(text));
}

function extraMatches(text: string, patterns: RegExp[]): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  for (const pattern of patterns) {
    // A fresh global copy: the caller's lastIndex is never touched, sticky mode never applies.
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '') + 'g');
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      found.push({ start: m.index, end: m.index + m[0].length });
    }
  }
  return found;
}

/**
 * The broader mechanism: the five detectors plus `opts.extraPatterns`. Where a caller pattern
 * overlaps a detected span, the union is replaced by the caller's placeholder, so no fragment of
 * either leaks.
 */
export function redactText(text: string, opts: RedactOptions = {}): string {
  const patterns = opts.extraPatterns ?? [];
  if (patterns.length === 0) return redact(text);
  const placeholder = opts.placeholder ?? DEFAULT_EXTRA_PLACEHOLDER;

  type Item = { start: number; end: number; with: string; extra: boolean; kind?: PiiKind };
  const items: Item[] = detectPii(text).map((s) => ({
    start: s.start,
    end: s.end,
    with: PLACEHOLDERS[s.kind],
    extra: false,
    kind: s.kind,
  }));
  for (const m of extraMatches(text, patterns)) items.push({ ...m, with: placeholder, extra: true });
  items.sort((x, y) => x.start - y.start || y.end - x.end);

  const merged: Item[] = [];
  let cur: Item | undefined;
  for (const it of items) {
    if (cur && it.start < cur.end) {
      if (it.end > cur.end) cur.end = it.end;
      if (it.extra && !cur.extra) {
        cur.extra = true;
        cur.with = placeholder;
      }
      continue;
    }
    if (cur) merged.push(cur);
    cur = { ...it };
  }
  if (cur) merged.push(cur);
  // a detector's find swallowed by a caller's pattern is that pattern's placeholder, not a redaction of its kind
  for (const it of merged) if (!it.extra && it.kind) countRedaction(it.kind);
  return rebuild(text, merged, (it) => it.with);
}

/** Redact every message's content (see `redactText`); other fields are kept as they are. */
export function redactMessages<T extends RedactMessage>(messages: readonly T[], opts: RedactOptions = {}): T[] {
  return messages.map((m) => ({ ...m, content: redactText(m.content, opts) }));
}
