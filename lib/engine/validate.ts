// Step 5 of DESIGN: One model call, in order, reached only by an `ok` answer: parse the text as
// JSON and validate it against the node's output schema (Ajv, the product's one configuration in
// `validate` mode). Every issue is a JSON pointer + message, for the record and the repair message.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from '@/lib/shared/ajv';
import type { ValidationIssue } from './types';

const ajv = createAjv('validate');
// a flow's schema object is reused for every call of its node: compile once
const compiled = new WeakMap<object, ValidateFunction>();

export type Validated = { valid: true; value: unknown } | { valid: false; issues: ValidationIssue[] };

export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** Models often wrap JSON in a Markdown fence; a single surrounding fence is not part of the value. */
function unfence(text: string): string {
  const t = text.trim();
  const m = /^```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(t);
  return m ? m[1]! : t;
}

function issueOf(e: ErrorObject): ValidationIssue {
  let message = e.message ?? `fails ${e.keyword}`;
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'enum' && Array.isArray(p.allowedValues)) message += `: ${p.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  else if (e.keyword === 'const') message += `: ${JSON.stringify(p.allowedValue)}`;
  else if (e.keyword === 'additionalProperties') message += `: ${JSON.stringify(p.additionalProperty)}`;
  return { pointer: e.instancePath, message };
}

export function validateOutput(schema: Record<string, unknown>, text: string): Validated {
  let value: unknown;
  try {
    value = JSON.parse(unfence(text));
  } catch (err) {
    // not the parser's own words: V8 quotes a piece of the input, which is raw model output
    const at = /position (\d+)/.exec(err instanceof Error ? err.message : '');
    return { valid: false, issues: [{ pointer: '', message: at ? `is not valid JSON (error at position ${at[1]})` : 'is not valid JSON' }] };
  }
  const validate = compileSchema(schema);
  if (validate(value)) return { valid: true, value };
  return { valid: false, issues: (validate.errors ?? []).map(issueOf) };
}
