// Diagnostics of `aqven check` (DESIGN: CLI): every problem is a value with a code, a position
// (file:line:col, 1-based), the field it is about as data (file + path) and a one-line hint —
// never a stack trace.

export type CheckCode =
  | 'E_OUTCOME_FALLBACK'
  | 'E_FIELD'
  | 'E_MODEL'
  | 'E_PROVIDER'
  | 'E_STRICT'
  | 'E_FLOW_AGENT'
  | 'E_FLOW_NEEDS'
  | 'E_TEMPLATE'
  | 'E_SCHEMA'
  | 'W_API_KEY';

export const CHECK_CODES: readonly CheckCode[] = [
  'E_OUTCOME_FALLBACK',
  'E_FIELD',
  'E_MODEL',
  'E_PROVIDER',
  'E_STRICT',
  'E_FLOW_AGENT',
  'E_FLOW_NEEDS',
  'E_TEMPLATE',
  'E_SCHEMA',
  'W_API_KEY',
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
}

export function severityOf(code: CheckCode): Severity {
  return code.startsWith('W_') ? 'warning' : 'error';
}

/** `file:line:col: error CODE message` and, on a second line, `  hint: …`. */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.col}: ${d.severity} ${d.code} ${d.message}\n  hint: ${d.hint}`;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** aqven.yaml first, then providers, agents, flows; inside a file by position. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  const rank = (file: string): number =>
    file === 'aqven.yaml' ? 0 : file.startsWith('providers/') ? 1 : file.startsWith('agents/') ? 2 : file.startsWith('flows/') ? 3 : 4;
  return diagnostics
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        rank(a.d.file) - rank(b.d.file) ||
        (a.d.file < b.d.file ? -1 : a.d.file > b.d.file ? 1 : 0) ||
        a.d.line - b.d.line ||
        a.d.col - b.d.col ||
        a.i - b.i,
    )
    .map(({ d }) => d);
}
