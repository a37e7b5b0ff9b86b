// What makes two failures "the same" (DESIGN: Storage, "Notes, search and daily statistics"): the agent, the model, the
// cause (or the node's error code) and the failure text with its particulars — ids, numbers, quoted
// values, byte counts — replaced by placeholders. The run store stamps each failed attempt and node
// with it; /failures groups by it. Pure, so the write path and the pages share one rule.

/** A failed attempt (level 'attempt') or a failed node (level 'node'), as the store sees it. */
export interface FailureFacts {
  level: 'attempt' | 'node';
  agent: string;
  /** the attempt's model; '' for a node (its text names the models) */
  model: string;
  /** an attempt's cause (provider_error, refusal, truncated, invalid_output, quota) or error kind; a node's error code */
  code: string;
  /** the failure text as stored (already redacted) */
  message: string | null;
}

export interface FailureSignature {
  /** 16 hex characters; the same facts give the same signature in every process and dialect */
  sig: string;
  /** the message with its particulars replaced, as the group shows it */
  normalised: string;
}

/** longest normalised text kept: the start of a message tells failures apart, its tail rarely does */
export const SIGNATURE_TEXT_MAX = 200;

const RULES: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
  [/\b(?:run|att|node|req|chatcmpl|msg|gen)[-_][A-Za-z0-9_-]{6,}\b/g, '<id>'],
  [/\b[0-9a-f]{12,}\b/gi, '<hex>'],
  [/"(?:[^"\\]|\\.){0,200}"/g, '"…"'],
  // a quote opens after no letter and closes before none: the apostrophe of "gpt-oss-20b's" or "can't" is no quote
  [/(?<![\p{L}\p{N}])'(?:[^'\\]|\\.){0,200}'(?![\p{L}\p{N}])/gu, "'…'"],
  [/\b\d+(?:[.,]\d+)*\s?(?:ms|s|KiB|MiB|bytes|tokens)\b/g, '<n>'],
  [/\b\d{4}-\d{2}-\d{2}T[\d:.]+Z?\b/g, '<time>'],
  // a number standing alone; digits inside a name (gemini-2.5-flash-lite, gpt-oss-20b) stay
  [/(?<![\w.-])\d+(?:\.\d+)?(?![\w-])/g, '<n>'],
];

/** The message with its particulars replaced and its whitespace folded. */
export function normaliseFailureText(message: string | null): string {
  let s = (message ?? '').replace(/\s+/g, ' ').trim();
  for (const [re, to] of RULES) s = s.replace(re, to);
  return s.length > SIGNATURE_TEXT_MAX ? `${s.slice(0, SIGNATURE_TEXT_MAX - 1)}…` : s;
}

/** FNV-1a over UTF-16 code units, 64-bit, as hex: stable, fast, no crypto needed for grouping */
function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * prime) & mask;
  }
  return h.toString(16).padStart(16, '0');
}

/** The signature of a failure: equal facts (up to particulars of the text) give equal signatures. */
export function failureSignature(f: FailureFacts): FailureSignature {
  const normalised = normaliseFailureText(f.message);
  return { sig: fnv1a64([f.level, f.agent, f.model, f.code, normalised].join('\u0000')), normalised };
}
