// How many times each detector's find was replaced by its placeholder in this process (DESIGN:
// Redaction; counted for aqven_redactions_total, lib/observe/metrics.ts). Counted where a span
// becomes its placeholder — replaceSpans (detect.ts: `redact` and the stream redactor) and
// `redactText`'s merge (index.ts) — so a text redacted for two stored fields counts twice.
//
// The counts live on globalThis, not in this module: under `aqven serve` the dashboard's server code
// is Next.js's bundle of lib/, a second copy of this module in the same process, and a run started
// from a form redacts through that copy.
import type { PiiKind } from './span';

const KEY = Symbol.for('aqven.redaction-tally');
type Tally = Record<PiiKind, number>;

function tally(): Tally {
  const g = globalThis as { [KEY]?: Tally };
  return (g[KEY] ??= { email: 0, iban: 0, card: 0, phone: 0, ip: 0 });
}

/** One find of `kind` replaced by its placeholder. */
export function countRedaction(kind: PiiKind): void {
  tally()[kind]++;
}

/** Replacements per kind since the process started (a copy). */
export function redactionCounts(): Readonly<Tally> {
  return { ...tally() };
}
