// One project file, parsed with its positions and validated against its zod schema. Every check of
// a project starts here; the checks across files come after (load.ts, check-flows.ts).
import { basename, extname } from 'node:path';
import type { z } from 'zod';
import type { Diagnostic } from './diagnostics';
import type { Env } from './env';
import { issueDiagnostics } from './issues';
import { formatBytes, LIMITS } from './limits';
import { NAME_PATTERN } from './schema';
import { YamlSource } from './yaml-source';

export interface Parsed<T> {
  src: YamlSource;
  data: T | null;
  diagnostics: Diagnostic[];
}

/**
 * Parses one file against its schema; `env` expands `${VAR}` first (aqven.yaml, providers only).
 * Each step runs only on what the steps before accepted: the size, the YAML syntax, the
 * structure (depth, aliases, keys, numbers), then the schema. Never throws.
 */
export function parseFile<S extends z.ZodType>(file: string, text: string, schema: S, env?: Env): Parsed<z.output<S>> {
  const { src, diagnostics: problems } = readYaml(file, text);
  if (problems.length) return { src, data: null, diagnostics: problems };
  const diagnostics = env ? src.expandEnv(env) : [];
  let raw: unknown;
  try {
    raw = src.toJS();
  } catch (err) {
    // structureDiagnostics leaves nothing for yaml to refuse; should it still, the file is answered
    diagnostics.push(
      src.diagnostic('E_FIELD', null, `the file cannot be read as data: ${err instanceof Error ? err.message : String(err)}`, 'simplify the file (anchors, aliases, nesting)'),
    );
    return { src, data: null, diagnostics };
  }
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

/**
 * The file parsed, with what stops it from becoming a JS value safely: its size, YAML syntax
 * errors, then its structure (depth, aliases, keys, numbers). No diagnostics: `src.toJS()` is safe.
 */
export function readYaml(file: string, text: string): { src: YamlSource; diagnostics: Diagnostic[] } {
  const tooBig = sizeDiagnostic(file, text);
  // an empty source keeps positions and nodeAt working for the callers
  if (tooBig) return { src: new YamlSource(file, ''), diagnostics: [tooBig] };
  let src: YamlSource;
  try {
    src = new YamlSource(file, text);
  } catch (err) {
    // yaml's parser recurses once per line of a block mapping left inside an unclosed flow
    // collection ("{ a: 1," then 2,000 "k: v" lines, ~30 KB): answered, not thrown
    if (!(err instanceof RangeError)) throw err;
    return {
      src: new YamlSource(file, ''),
      diagnostics: [
        {
          file,
          line: 1,
          col: 1,
          severity: 'error',
          code: 'E_LIMIT',
          message: 'the file cannot be parsed: its structure nests too deeply for the YAML parser',
          hint: 'close every "{" and "[" on the line it belongs to, and split long mappings',
          path: [],
        },
      ],
    };
  }
  const syntax = src.syntaxDiagnostics();
  return { src, diagnostics: syntax.length ? syntax : src.structureDiagnostics() };
}

/** E_LIMIT for a file over LIMITS.fileBytes (by its UTF-8 size), at its start. */
export function sizeDiagnostic(file: string, text: string | number): Diagnostic | null {
  const bytes = typeof text === 'number' ? text : text.length > LIMITS.fileBytes / 4 ? Buffer.byteLength(text, 'utf8') : text.length;
  if (bytes <= LIMITS.fileBytes) return null;
  return {
    file,
    line: 1,
    col: 1,
    severity: 'error',
    code: 'E_LIMIT',
    message: `the file is ${formatBytes(bytes)}; a project file may be at most ${formatBytes(LIMITS.fileBytes)}`,
    hint: 'split it up (one agent or flow per file) or shorten it',
    path: [],
  };
}

/** The name a file gives its provider, agent or flow: "agents/classifier.yaml" → "classifier". */
export function fileStem(file: string): string {
  return basename(file, extname(file));
}

export function nameDiagnostic(src: YamlSource, what: 'provider' | 'agent' | 'flow'): Diagnostic[] {
  const name = fileStem(src.file);
  if (NAME_PATTERN.test(name)) return [];
  return [
    src.diagnostic('E_FIELD', null, `${what} name "${name}" (from the file name) may contain only letters, digits, "-" and "_"`, `rename the file, e.g. ${what}s/my-${what}.yaml`),
  ];
}
