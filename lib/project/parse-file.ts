// One project file, parsed with its positions and validated against its zod schema. Every check of
// a project starts here; the checks across files come after (load.ts, check-flows.ts).
import { basename, extname } from 'node:path';
import type { z } from 'zod';
import type { Diagnostic } from './diagnostics';
import type { Env } from './env';
import { issueDiagnostics } from './issues';
import { NAME_PATTERN } from './schema';
import { YamlSource } from './yaml-source';

export interface Parsed<T> {
  src: YamlSource;
  data: T | null;
  diagnostics: Diagnostic[];
}

/** Parses one file against its schema; `env` expands `${VAR}` first (aqven.yaml, providers only). */
export function parseFile<S extends z.ZodType>(file: string, text: string, schema: S, env?: Env): Parsed<z.output<S>> {
  const src = new YamlSource(file, text);
  const syntax = src.syntaxDiagnostics();
  if (syntax.length) return { src, data: null, diagnostics: syntax };
  const diagnostics = env ? src.expandEnv(env) : [];
  const raw = src.toJS();
  if (raw === null || raw === undefined) {
    diagnostics.push(src.diagnostic('E_FIELD', null, 'the file is empty', 'start the file with apiVersion: "aqven/v1" and kind'));
    return { src, data: null, diagnostics };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    diagnostics.push(src.diagnosticAt('E_FIELD', [], 'the file must be a mapping of keys to values', 'start the file with apiVersion: "aqven/v1" and kind'));
    return { src, data: null, diagnostics };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    diagnostics.push(...issueDiagnostics(src, schema, result.error.issues, raw));
    return { src, data: null, diagnostics };
  }
  return { src, data: diagnostics.length ? null : result.data, diagnostics };
}

/** The name a file gives its provider, agent or flow: "agents/classifier.yaml" → "classifier". */
export function fileStem(file: string): string {
  return basename(file, extname(file));
}

export function nameDiagnostic(src: YamlSource, what: 'provider' | 'agent' | 'flow'): Diagnostic[] {
  const name = fileStem(src.file);
  if (NAME_PATTERN.test(name)) return [];
  return [src.diagnostic('E_FIELD', null, `${what} name "${name}" (from the file name) may contain only letters, digits, "-" and "_"`, `rename the file, e.g. ${what}s/my-${what}.yaml`)];
}
