// One parsed YAML file with its positions: every diagnostic points at the key or value it is
// about, as `file:line:col` (1-based), so the user never has to search for it.
import { Document, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Node } from 'yaml';
import type { CheckCode, Diagnostic, PathSegment } from './diagnostics';
import { severityOf } from './diagnostics';
import { expandEnv, type Env } from './env';

export type { PathSegment };

export interface Position {
  line: number;
  col: number;
}

export class YamlSource {
  readonly doc: Document.Parsed;
  private readonly lines = new LineCounter();

  constructor(
    /** relative to the project folder */
    readonly file: string,
    readonly text: string,
  ) {
    this.doc = parseDocument(text, { lineCounter: this.lines, prettyErrors: false, uniqueKeys: true });
  }

  position(offset: number): Position {
    const p = this.lines.linePos(Math.max(0, Math.min(offset, this.text.length)));
    return { line: p.line, col: p.col };
  }

  /** A diagnostic at an explicit offset (null: the start of the file) about the field at `path`. */
  diagnostic(code: CheckCode, offset: number | null, message: string, hint: string, path: readonly PathSegment[] = []): Diagnostic {
    const { line, col } = offset === null ? { line: 1, col: 1 } : this.position(offset);
    return { file: this.file, line, col, severity: severityOf(code), code, message, hint, path: [...path] };
  }

  /** A diagnostic about the field at `path`, positioned at its value (or key) — see offsetOf. */
  diagnosticAt(code: CheckCode, path: readonly PathSegment[], message: string, hint: string, prefer: 'value' | 'key' = 'value'): Diagnostic {
    return this.diagnostic(code, this.offsetOf(path, prefer), message, hint, path);
  }

  /** YAML syntax errors, as E_FIELD at their own position. */
  syntaxDiagnostics(): Diagnostic[] {
    return this.doc.errors.map((e) => {
      const message = e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
      return this.diagnostic('E_FIELD', e.pos[0], `YAML syntax error: ${message}`, 'fix the YAML syntax at this position');
    });
  }

  /** The plain JS value of the document (null for an empty file). */
  toJS(): unknown {
    return this.doc.toJS({ maxAliasCount: 100 });
  }

  /**
   * Expands `${VAR}` / `${VAR:-default}` in every string value (never in keys), in place, so
   * positions stay those of the original scalars.
   */
  expandEnv(env: Env): Diagnostic[] {
    const out: Diagnostic[] = [];
    visit(this.doc, {
      Scalar: (key, node, ancestors) => {
        if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return;
        const { value, missing } = expandEnv(node.value, env);
        node.value = value;
        for (const name of missing) {
          out.push(
            this.diagnostic(
              'E_FIELD',
              node.range?.[0] ?? null,
              `environment variable ${name} is not set and "\${${name}}" has no default`,
              `set ${name}, or write "\${${name}:-default}" to give it a default`,
              fieldPath(ancestors, node),
            ),
          );
        }
      },
    });
    return out;
  }

  /** The node at a path (the value), or undefined. */
  nodeAt(path: readonly PathSegment[]): Node | undefined {
    let node: unknown = this.doc.contents;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && keyString(p.key) === String(seg));
        if (!pair) return undefined;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
      } else {
        return undefined;
      }
    }
    return (node ?? undefined) as Node | undefined;
  }

  /** The key node of the last segment of a path in a mapping, or undefined. */
  keyAt(path: readonly PathSegment[]): Node | undefined {
    if (path.length === 0) return undefined;
    const parent = path.length === 1 ? this.doc.contents : this.nodeAt(path.slice(0, -1));
    if (!isMap(parent)) return undefined;
    const last = String(path[path.length - 1]);
    const pair = parent.items.find((p) => isPair(p) && keyString(p.key) === last);
    return (pair?.key ?? undefined) as Node | undefined;
  }

  /**
   * Offset to report for a path: the value when it exists, else the key (e.g. `key:` with no
   * value), else the closest existing ancestor — for a missing key, its parent's key.
   */
  offsetOf(path: readonly PathSegment[], prefer: 'value' | 'key' = 'value'): number | null {
    for (let n = path.length; n >= 0; n--) {
      const p = path.slice(0, n);
      const value = rangeStart(this.nodeAt(p));
      const key = rangeStart(this.keyAt(p));
      const start = n === path.length && prefer === 'value' ? (value ?? key) : (key ?? value);
      if (start !== null) return start;
    }
    return null;
  }

  /** Offset of `needle` inside the source span of the value at `path` (for template refs). */
  offsetOfText(path: readonly PathSegment[], needle: string): number | null {
    const node = this.nodeAt(path);
    const range = node?.range;
    if (!range) return this.offsetOf(path);
    const i = this.text.slice(range[0], range[1]).indexOf(needle);
    return i >= 0 ? range[0] + i : range[0];
  }
}

/** The field path of a node from the ancestors `visit` passes (Document, Map, Pair, Seq, …). */
function fieldPath(ancestors: readonly unknown[], node: unknown): PathSegment[] {
  const path: PathSegment[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const here = chain[i];
    const next = chain[i + 1];
    if (isPair(here)) {
      const k = keyString(here.key);
      if (k !== undefined) path.push(k);
    } else if (isSeq(here)) path.push(here.items.indexOf(next as never));
  }
  return path;
}

function keyString(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  if (typeof key === 'string' || typeof key === 'number') return String(key);
  return undefined;
}

function rangeStart(node: Node | undefined): number | null {
  if (!node || !node.range) return null;
  // `key:` with nothing after it has an empty null value: point at the key instead
  if (isScalar(node) && node.value === null && node.range[0] === node.range[1]) return null;
  return node.range[0];
}
