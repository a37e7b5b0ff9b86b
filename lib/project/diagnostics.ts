// Diagnostics of `aqven check` (DESIGN: CLI): every problem is a value with a code, a position
// (file:line:col, 1-based), the field it is about as data (file + path) and a one-line hint —
// never a stack trace.
import { LIMITS, printable } from './limits';

export type CheckCode =
  | 'E_OUTCOME_FALLBACK'
  | 'E_CHAIN_DUPLICATE'
  | 'E_FIELD'
  | 'E_MODEL'
  | 'E_PROVIDER'
  | 'E_ENV_NAME'
  | 'E_PROVIDER_HOST'
  | 'E_STRICT'
  | 'E_FLOW_AGENT'
  | 'E_FLOW_NEEDS'
  | 'E_TEMPLATE'
  | 'E_SCHEMA'
  | 'E_LIMIT'
  | 'E_MORE'
  | 'W_API_KEY'
  | 'W_UNPRICED'
  | 'W_SCHEMA_LIMIT'
  | 'W_ALERT_WEBHOOK';

export const CHECK_CODES: readonly CheckCode[] = [
  'E_OUTCOME_FALLBACK',
  'E_CHAIN_DUPLICATE',
  'E_FIELD',
  'E_MODEL',
  'E_PROVIDER',
  'E_ENV_NAME',
  'E_PROVIDER_HOST',
  'E_STRICT',
  'E_FLOW_AGENT',
  'E_FLOW_NEEDS',
  'E_TEMPLATE',
  'E_SCHEMA',
  'E_LIMIT',
  'E_MORE',
  'W_API_KEY',
  'W_UNPRICED',
  // needs a database of measured limits: `aqven check` adds it (lib/project/schema-limits.ts)
  'W_SCHEMA_LIMIT',
  'W_ALERT_WEBHOOK',
];

export type Severity = 'error' | 'warning';

/** A key of a mapping or an index of a list. */
export type PathSegment = string | number;

export interface Diagnostic {
  /** relative to the project folder, e.g. "agents/classifier.yaml" */
  file: string;
  line: number;
  col: number;
  severity: Severity;
  code: CheckCode;
  message: string;
  hint: string;
  /** the field inside `file` it is about, e.g. ["output", "on_error"]; [] for the file as a whole.
   * Code that places a diagnostic (the dashboard's form) reads this, never the message. */
  path: PathSegment[];
  /** E_MORE only: how many errors of this file are left out of the list (DESIGN: CLI) */
  omitted?: number;
}

export function severityOf(code: CheckCode): Severity {
  return code.startsWith('W_') ? 'warning' : 'error';
}

/** `file:line:col: error CODE message`, then `  hint: …`, then where the code's page is: `  see: aqven explain CODE` (lib/project/check-reference.ts). */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.col}: ${d.severity} ${d.code} ${d.message}\n  hint: ${d.hint}\n  see: aqven explain ${d.code}`;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** How many problems a list stands for: an E_MORE diagnostic counts the errors it left out. */
export function countOf(d: Diagnostic): number {
  return d.code === 'E_MORE' ? (d.omitted ?? 0) : 1;
}

/**
 * The errors of a file left out of the list, as one E_MORE diagnostic about the whole file
 * (line 1, col 1, path []); producers that stop early (a file with 100,000 problems) add one, and
 * capDiagnostics folds them per file.
 */
export function moreDiagnostic(file: string, omitted: number): Diagnostic {
  return {
    file,
    line: 1,
    col: 1,
    severity: 'error',
    code: 'E_MORE',
    message: `and ${omitted} more error${omitted === 1 ? '' : 's'} in this file, not listed`,
    hint: `fix the errors above and run aqven check again; at most ${LIMITS.diagnosticsPerFile} errors are listed per file`,
    path: [],
    omitted,
  };
}

/**
 * At most LIMITS.diagnosticsPerFile errors per file, in file order; the rest (and what producers
 * already counted in E_MORE diagnostics) become one E_MORE, listed last for its file. Warnings
 * are few (one per provider) and always kept. Messages and hints are made printable.
 */
export function capDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  const sorted = sortDiagnostics(diagnostics);
  const out: Diagnostic[] = [];
  const kept = new Map<string, number>();
  const more = new Map<string, number>();
  for (const d of sorted) {
    if (d.severity === 'error') {
      const n = kept.get(d.file) ?? 0;
      if (d.code === 'E_MORE' || n >= LIMITS.diagnosticsPerFile) {
        more.set(d.file, (more.get(d.file) ?? 0) + countOf(d));
        continue;
      }
      kept.set(d.file, n + 1);
    }
    out.push({ ...d, message: printable(d.message), hint: printable(d.hint) });
  }
  for (const [file, omitted] of more) if (omitted > 0) out.push(moreDiagnostic(file, omitted));
  return sortDiagnostics(out);
}

/** aqven.yaml first, then providers, agents, flows; inside a file by position, its E_MORE last. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  const rank = (file: string): number => (file === 'aqven.yaml' ? 0 : file.startsWith('providers/') ? 1 : file.startsWith('agents/') ? 2 : file.startsWith('flows/') ? 3 : 4);
  return diagnostics
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        rank(a.d.file) - rank(b.d.file) ||
        (a.d.file < b.d.file ? -1 : a.d.file > b.d.file ? 1 : 0) ||
        Number(a.d.code === 'E_MORE') - Number(b.d.code === 'E_MORE') ||
        a.d.line - b.d.line ||
        a.d.col - b.d.col ||
        a.i - b.i,
    )
    .map(({ d }) => d);
}
