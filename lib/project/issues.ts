// Turns zod issues into diagnostics that point at the offending key or value of a YAML file.
import type { z } from 'zod';
import type { CheckCode, Diagnostic } from './diagnostics';
import type { IssueParams } from './schema';
import { quote } from './limits';
import { DiagnosticList, type PathSegment, type YamlSource } from './yaml-source';

type Issue = z.core.$ZodIssue;

/** The check code a zod issue carries (`params.code`), E_FIELD otherwise. */
export function issueCode(issue: Issue): CheckCode {
  const params = (issue as { params?: IssueParams }).params;
  return params?.code ?? 'E_FIELD';
}

function valueAt(root: unknown, path: readonly PathSegment[]): { found: boolean; value: unknown } {
  let v: unknown = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, seg)) return { found: false, value: undefined };
    v = (v as Record<string | number, unknown>)[seg];
  }
  return { found: true, value: v };
}

/** The keys a strict object schema accepts at a path, for "did you mean" hints. */
export function allowedKeys(schema: z.ZodType, path: readonly PathSegment[]): string[] {
  let s: unknown = schema;
  let i = 0;
  for (let guard = 0; guard < 100 && s; guard++) {
    const def = (s as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (!def) return [];
    const type = def.type as string;
    if (type === 'object') {
      if (i === path.length) return Object.keys(def.shape as object);
      s = (def.shape as Record<string, unknown>)[String(path[i++])];
    } else if (type === 'record') {
      if (i === path.length) return [];
      i++;
      s = def.valueType;
    } else if (type === 'array') {
      if (i === path.length) return [];
      i++;
      s = def.element;
    } else if (type === 'pipe') {
      s = def.in;
    } else if ('innerType' in def) {
      s = def.innerType;
    } else {
      return [];
    }
  }
  return [];
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}

export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dist = editDistance(word.toLowerCase(), c.toLowerCase());
    if (dist < bestD) [best, bestD] = [c, dist];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

const dotted = (path: readonly PathSegment[]): string =>
  path
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) ? (i ? `.${quote(s, 40)}` : quote(s, 40)) : `[${JSON.stringify(quote(s, 40))}]`))
    .join('');

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value === 'string' ? `the string ${JSON.stringify(quote(value))}` : `${typeof value} ${quote(String(value))}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
  int: 'an integer',
};

const EXAMPLES: Record<string, string> = {
  apiVersion: '"aqven/v1"',
  model: '"openrouter:openai/gpt-oss-20b" (provider:model-id)',
  agent: '"<name of a file in agents/>"',
  prompt: '"… {{ input.<field> }} …"',
  nodes: '(a mapping of node ids to nodes)',
};

/**
 * One diagnostic per issue (per key, for unknown keys), at most LIMITS.diagnosticsPerFile of them
 * positioned: the rest are counted (positioning costs a walk down the file).
 */
export function issueDiagnostics(src: YamlSource, schema: z.ZodType, issues: readonly Issue[], raw: unknown): Diagnostic[] {
  const list = new DiagnosticList();
  const out = { push: (...ds: Diagnostic[]) => ds.forEach((d) => list.add(() => d)) };
  for (const issue of issues) {
    if (list.full) {
      const count = issue.code === 'unrecognized_keys' ? issue.keys.length : 1;
      for (let i = 0; i < count; i++) list.count();
      continue;
    }
    const path = issue.path as PathSegment[];
    const params = (issue as { params?: IssueParams }).params ?? {};
    const code = params.code ?? 'E_FIELD';
    const where = path.length ? dotted(path) : 'the file';

    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeys(schema, path);
      for (const key of issue.keys) {
        list.add(() => {
          const guess = key.length <= 64 ? closest(key, allowed) : undefined;
          return src.diagnosticAt(
            'E_FIELD',
            [...path, key],
            `unknown key "${quote(key)}"${path.length ? ` in ${dotted(path)}` : ''}`,
            guess ? `did you mean "${guess}"?` : allowed.length ? `allowed keys here: ${allowed.join(', ')}` : 'remove this key',
            'key',
          );
        });
      }
      continue;
    }

    const at = valueAt(raw, path);
    if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && !at.found && path.length > 0) {
      const key = String(path[path.length - 1]);
      const expected = issue.code === 'invalid_value' ? issue.values.map((v) => JSON.stringify(v)).join(' or ') : (EXPECTED[issue.expected] ?? issue.expected);
      out.push(
        src.diagnosticAt(
          'E_FIELD',
          path,
          `missing required key "${key}"${path.length > 1 ? ` in ${dotted(path.slice(0, -1))}` : ''}`,
          params.hint ?? (EXAMPLES[key] ? `add ${key}: ${EXAMPLES[key]}` : issue.code === 'invalid_value' ? `add ${key}: ${expected}` : `add ${key}: (${expected})`),
        ),
      );
      continue;
    }

    let message: string;
    let hint = params.hint;
    switch (issue.code) {
      case 'custom':
        message = issue.message;
        break;
      case 'invalid_type': {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        message = `${where} must be ${expected}, not ${describeType(at.value)}`;
        const quoted = typeof at.value === 'string';
        hint ??=
          quoted && (issue.expected === 'number' || issue.expected === 'int') && at.value !== '' && !Number.isNaN(Number(at.value))
            ? `write ${String(at.value)} without quotes`
            : issue.expected === 'boolean'
              ? 'write true or false, without quotes'
              : `write ${expected} here`;
        break;
      }
      case 'invalid_value': {
        const values = issue.values.map((v) => JSON.stringify(v)).join(', ');
        message =
          issue.values.length === 1 && issue.message && !issue.message.startsWith('Invalid')
            ? issue.message
            : `${where} must be ${issue.values.length === 1 ? values : `one of ${values}`}`;
        hint ??= issue.values.length === 1 ? `write ${values}` : `use one of ${values}`;
        break;
      }
      case 'invalid_union': {
        // a discriminated union (a simulator step's kind) names its options: list them
        const options = (issue as { options?: unknown[] }).options;
        if (options?.length) {
          const values = options.map((v) => JSON.stringify(v)).join(', ');
          message = `${where} must be one of ${values}`;
          hint ??= `use one of ${values}`;
          break;
        }
        const disc = (issue as { note?: string }).note;
        message = `${where} is not valid${disc ? ` (${disc})` : ''}`;
        break;
      }
      case 'too_small':
      case 'too_big': {
        const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
        const cmp = issue.code === 'too_small' ? (issue.inclusive ? 'at least' : 'more than') : issue.inclusive ? 'at most' : 'less than';
        hint ??= `use a value ${cmp} ${String(bound)}`;
        message =
          issue.origin === 'array' || issue.origin === 'string'
            ? `${where} must have ${cmp} ${String(bound)} ${issue.origin === 'array' ? 'item(s)' : 'character(s)'}`
            : `${where} must be ${cmp} ${String(bound)}`;
        break;
      }
      case 'invalid_format':
        message = issue.message && !issue.message.startsWith('Invalid') ? issue.message : `${where} is not a valid ${issue.format}`;
        break;
      default:
        message = `${where}: ${issue.message}`;
    }
    hint ??= defaultHint(path);
    out.push(src.diagnosticAt(code, path, message, hint, params.at === 'key' ? 'key' : 'value'));
  }
  return list.done(src.file);
}

function defaultHint(path: readonly PathSegment[]): string {
  return path.length ? `fix the value of ${dotted(path)}` : 'start the file with apiVersion: "aqven/v1" and its kind';
}
