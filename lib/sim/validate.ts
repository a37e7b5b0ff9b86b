// Shape checks for scripts, chaos profiles and latency coming from files or the control API, with
// the zod schemas of script-schema.ts (the one home of that format). Each returns a list of
// "path: problem" strings (e.g. `scripts["openai/gpt-oss-20b"][0].kind: must be one of …`);
// empty = valid.
import type { z } from 'zod';
import { chaosSchema, latencySchema, scriptMapSchema } from './script-schema';

type Segment = PropertyKey;

/** `scripts["model-id"][0].latency.first_token_ms`: a model id (a key of `scripts`) is quoted. */
export function formatPath(path: readonly Segment[]): string {
  return path
    .map((seg, i) => {
      if (typeof seg === 'number') return `[${seg}]`;
      const s = String(seg);
      if ((i === 1 && path[0] === 'scripts') || !/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s)) return `[${JSON.stringify(s)}]`;
      return i ? `.${s}` : s;
    })
    .join('');
}

function valueAt(root: unknown, path: readonly Segment[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return JSON.stringify(value);
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
};

export interface Problem {
  /** where the problem is, from the root of the checked value */
  path: Segment[];
  /** "path: problem" */
  text: string;
}

/** One problem per zod issue (per unknown key); `prefix` is where `raw` sits (e.g. ["scripts"]). */
export function issueProblems(issues: readonly z.core.$ZodIssue[], raw: unknown, prefix: readonly Segment[] = []): Problem[] {
  const out: Problem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    const at = (p: readonly Segment[]) => (p.length ? formatPath(p) : '(top level)');
    const value = valueAt(raw, issue.path);
    const got = describe(value);
    const push = (text: string) => out.push({ path, text });
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) out.push({ path: [...path, key], text: `${at([...path, key])}: unknown key` });
        break;
      case 'invalid_union': {
        const options = (issue as { options?: unknown[] }).options;
        push(options ? `${at(path)}: must be one of ${options.join(', ')} (got ${got})` : `${at(path)}: is not valid (got ${got})`);
        break;
      }
      case 'invalid_value':
        push(`${at(path)}: must be ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.join(', ')}`} (got ${got})`);
        break;
      case 'invalid_type':
        push(
          value === undefined
            ? `${at(path)}: missing (${EXPECTED[issue.expected] ?? issue.expected} is required)`
            : `${at(path)}: must be ${EXPECTED[issue.expected] ?? issue.expected} (got ${got})`,
        );
        break;
      case 'too_small':
      case 'too_big': {
        const bound = String(issue.code === 'too_small' ? issue.minimum : issue.maximum);
        const cmp = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
        if (issue.origin === 'array') push(bound === '1' && cmp === '>=' ? `${at(path)}: must be a non-empty list` : `${at(path)}: must be a list of ${cmp} ${bound} item(s)`);
        else push(`${at(path)}: must be ${cmp} ${bound} (got ${got})`);
        break;
      }
      default:
        push(`${at(path)}: ${issue.message}`);
    }
  }
  return out;
}

function check(schema: z.ZodType, v: unknown, prefix: string): string[] {
  const r = schema.safeParse(v);
  return r.success ? [] : issueProblems(r.error.issues, v, [prefix]).map((p) => p.text);
}

export function validateLatency(v: unknown, path = 'latency'): string[] {
  return v === undefined ? [] : check(latencySchema, v, path);
}

export function validateScripts(v: unknown, path = 'scripts'): string[] {
  return check(scriptMapSchema, v, path);
}

/** null and undefined mean "no chaos". */
export function validateChaos(v: unknown, path = 'chaos'): string[] {
  return v === undefined || v === null ? [] : check(chaosSchema, v, path);
}

export function assertValid(errs: string[], what: string): void {
  if (errs.length > 0) throw new Error(`invalid ${what}:\n  ${errs.join('\n  ')}`);
}
