// The five detectors over a stream (DESIGN: Streaming, Redaction): text that may become failure
// text is never written raw, so streamed deltas are redacted before they are stored. A pattern can
// be split across chunks ("anna@exa" + "mple.com"), so the redactor holds back a tail as long as
// the farthest any detector reads from a match's start (STREAM_HOLD_CHARS) and keeps the last
// STREAM_CONTEXT_CHARS characters it gave out as context: a match that starts in the text given
// out is complete and decided, exactly as in the whole text.
//
// Literal secrets (the API key) are replaced first, in a stage of their own that holds back one
// character less than the longest secret, as `redact(scrubKey(text))` does on a whole text.
import { DETECTOR_REACH, detectPiiFrom, replaceSpans } from './detect';

/** Characters held back: from a match's start, the farthest any detector reads (an email's 385). */
export const STREAM_HOLD_CHARS = DETECTOR_REACH.after;
/** Characters of text already given out kept as context: the farthest any detector reads back. */
export const STREAM_CONTEXT_CHARS = DETECTOR_REACH.before;

export interface StreamSecret {
  value: string;
  placeholder: string;
}

export interface StreamRedactor {
  /** more raw text of the stream */
  push(text: string): void;
  /**
   * The redacted text that no later chunk can change; '' while all of it is in the held-back tail.
   * Each call scans the pending text again: call it per batch, not per token.
   */
  take(): string;
  /** the stream ended: everything left, redacted */
  end(): string;
  /** raw characters pushed and not yet given out */
  readonly pending: number;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Stage 1: literal secrets, replaced as `text.split(value).join(placeholder)` would. */
class SecretStage {
  private buf = '';
  private readonly hold: number;

  constructor(private readonly secrets: StreamSecret[]) {
    this.hold = Math.max(0, ...secrets.map((s) => s.value.length - 1));
  }

  get pending(): number {
    return this.buf.length;
  }

  push(text: string): void {
    this.buf += text;
  }

  /** Replaces every whole secret starting before `limit`; returns the text up to the cut. */
  private emit(limit: number): string {
    const { buf } = this;
    let out = '';
    let last = 0;
    let cut = limit;
    for (;;) {
      // the leftmost secret at or after `last` (the longest when two start at the same place)
      let at = -1;
      let hit: StreamSecret | null = null;
      for (const s of this.secrets) {
        const i = buf.indexOf(s.value, last);
        if (i !== -1 && (at === -1 || i < at || (i === at && s.value.length > hit!.value.length))) {
          at = i;
          hit = s;
        }
      }
      if (!hit || at >= cut) break;
      // a secret that starts before the cut is whole (the hold covers it); the cut moves past it
      out += buf.slice(last, at) + hit.placeholder;
      last = at + hit.value.length;
      if (last > cut) cut = last;
    }
    if (cut > last && isHighSurrogate(buf.charCodeAt(cut - 1))) cut--;
    out += buf.slice(last, Math.max(last, cut));
    this.buf = buf.slice(Math.max(last, cut));
    return out;
  }

  take(): string {
    return this.buf.length > this.hold ? this.emit(this.buf.length - this.hold) : '';
  }

  end(): string {
    return this.emit(this.buf.length);
  }
}

/** Stage 2: the five detectors. */
class PiiStage {
  /** raw text already given out, kept as the detectors' left context */
  private context = '';
  /** raw text not yet given out */
  private buf = '';

  get pending(): number {
    return this.buf.length;
  }

  push(text: string): void {
    this.buf += text;
  }

  take(): string {
    if (this.buf.length <= STREAM_HOLD_CHARS) return '';
    const text = this.context + this.buf;
    const from = this.context.length;
    const spans = detectPiiFrom(text, from);
    // a match starting before the cut is complete: the tail after the cut covers its reach; one
    // that still runs across the cut is left whole for the next call
    let cut = text.length - STREAM_HOLD_CHARS;
    for (const s of spans) {
      if (s.start >= cut) break;
      if (s.end > cut) {
        cut = s.start;
        break;
      }
    }
    if (isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
    if (cut <= from) return '';
    const out = replaceSpans(text, spans, from, cut);
    this.context = text.slice(Math.max(0, cut - STREAM_CONTEXT_CHARS), cut);
    this.buf = text.slice(cut);
    return out;
  }

  end(): string {
    const text = this.context + this.buf;
    const from = this.context.length;
    const out = replaceSpans(text, detectPiiFrom(text, from), from, text.length);
    this.context = '';
    this.buf = '';
    return out;
  }
}

/**
 * A redactor for one stream. What `take()` and `end()` return, concatenated, is the stream
 * redacted as `redact` redacts the whole text (literal `secrets` replaced first).
 */
export function createStreamRedactor(opts: { secrets?: StreamSecret[] } = {}): StreamRedactor {
  const secrets = (opts.secrets ?? []).filter((s) => s.value.length > 0);
  const first = secrets.length ? new SecretStage(secrets) : null;
  const pii = new PiiStage();
  return {
    push(text) {
      if (first) first.push(text);
      else pii.push(text);
    },
    take() {
      if (first) pii.push(first.take());
      return pii.take();
    },
    end() {
      if (first) pii.push(first.end());
      return pii.end();
    },
    get pending() {
      return (first?.pending ?? 0) + pii.pending;
    },
  };
}
