// Checks every JSON Schema of a project (flow inputs, node outputs) with the product's one Ajv
// configuration in `check` mode, so what `aqven check` accepts is what the engine validates with.
import type { Ajv, ErrorObject } from 'ajv';
import { createAjv } from '../shared/ajv';

export interface SchemaProblem {
  /** path inside the schema, e.g. ["properties", "queue", "type"] */
  path: (string | number)[];
  /** when the path is unknown: the key (and value) inside the schema the problem is about */
  find?: { key: string; value?: string };
  message: string;
}

function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'schema';
  const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
  return `${where} ${e.message ?? 'is invalid'}${allowed ? `: ${allowed.map((v) => JSON.stringify(v)).join(', ')}` : ''}`;
}

let shared: Ajv | null = null;

/** Answers by the schema's JSON text: a flow repeating one output schema on 500 nodes compiles it once. */
const answers = new Map<string, SchemaProblem[]>();
const ANSWERS_KEPT = 1000;

/** Why a schema does not compile, or [] when it does. */
export function schemaProblems(schema: unknown): SchemaProblem[] {
  const key = JSON.stringify(schema);
  const known = answers.get(key);
  if (known) return known;
  const problems = compileProblems(schema);
  if (key.length > 10_000) return problems; // kept small: at most ~10 MB of keys
  if (answers.size >= ANSWERS_KEPT) answers.clear();
  answers.set(key, problems);
  return problems;
}

function compileProblems(schema: unknown): SchemaProblem[] {
  // one instance for all checks (creating one costs ~15 ms); a failed compile may leave state
  // behind, so that instance is dropped
  const ajv = (shared ??= createAjv('check'));
  if (!ajv.validateSchema(schema as object)) {
    const errors = ajv.errors ?? [];
    // the meta-schema reports each anyOf branch; the deepest error is the useful one
    const deepest = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
    return deepest ? [{ path: pointerToPath(deepest.instancePath), message: describe(deepest) }] : [{ path: [], message: 'schema is invalid' }];
  }
  try {
    ajv.compile(schema as object);
    ajv.removeSchema(schema as object);
    return [];
  } catch (err) {
    shared = null;
    const message = err instanceof Error ? err.message : String(err);
    const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
    const format = /unknown format "([^"]+)"/.exec(message)?.[1];
    const find = keyword ? { key: keyword } : format ? { key: 'format', value: format } : undefined;
    const text = format ? `unknown format "${format}"` : message.split('\n')[0];
    return [{ path: [], find, message: text }];
  }
}
