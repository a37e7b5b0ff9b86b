// One parsed YAML file with its positions: every diagnostic points at the key or value it is
// about, as `file:line:col` (1-based), so the user never has to search for it. Before the file
// becomes a JS value, its structure is checked in one iterative pass (structureDiagnostics):
// nesting depth, aliases (unresolved, circular, too many, expanding to too much), duplicate and
// non-string keys, "__proto__", and numbers written other than in decimal.
import { Document, isAlias, isCollection, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Node, type Pair, type Scalar, type YAMLMap } from 'yaml';
import type { CheckCode, Diagnostic, PathSegment } from './diagnostics';
import { moreDiagnostic, severityOf } from './diagnostics';
import { envPattern, expandEnv, type Env } from './env';
import { LIMITS, quote } from './limits';

export type { PathSegment };

export interface Position {
  line: number;
  col: number;
}

/** Collects at most LIMITS.diagnosticsPerFile diagnostics; the rest are only counted (E_MORE). */
export class DiagnosticList {
  readonly items: Diagnostic[] = [];
  private omitted = 0;

  get full(): boolean {
    return this.items.length >= LIMITS.diagnosticsPerFile;
  }

  /** `make` runs only while there is room: positioning a diagnostic may cost a walk of the file. */
  add(make: () => Diagnostic): void {
    if (!this.full) this.items.push(make());
    else this.omitted++;
  }

  /** One more left out. */
  count(): void {
    this.omitted++;
  }

  /** The diagnostics, with one E_MORE for the ones left out. */
  done(file: string): Diagnostic[] {
    return this.omitted === 0 ? this.items : [...this.items, moreDiagnostic(file, this.omitted)];
  }
}

/**
 * How every project file is parsed: the YAML 1.2 core schema even under a `%YAML 1.1` directive
 * (no sexagesimal or 0b numbers, no merge keys); duplicate keys are found by
 * structureDiagnostics (yaml's own check is quadratic in the number of keys).
 */
export const YAML_OPTIONS = { prettyErrors: false, uniqueKeys: false, schema: 'core', merge: false } as const;

export class YamlSource {
  readonly doc: Document.Parsed;
  private readonly lines = new LineCounter();
  /** per mapping, its pairs by key: nodeAt and keyAt stay cheap in a mapping of 10,000 keys */
  private readonly pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();

  constructor(
    /** relative to the project folder */
    readonly file: string,
    readonly text: string,
  ) {
    this.doc = parseDocument(text, { ...YAML_OPTIONS, lineCounter: this.lines });
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

  /** YAML syntax errors, as E_FIELD at their own position; nesting that exhausts the parser as E_LIMIT. */
  syntaxDiagnostics(): Diagnostic[] {
    const list = new DiagnosticList();
    for (const e of this.doc.errors) {
      if (e.code === 'RESOURCE_EXHAUSTION') {
        list.add(() =>
          this.diagnostic('E_LIMIT', e.pos[0], `the values here are nested too deeply to read (at most ${LIMITS.depth} levels of mappings and lists)`, 'flatten the structure'),
        );
        continue;
      }
      const message = e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
      list.add(() => this.diagnostic('E_FIELD', e.pos[0], `YAML syntax error: ${message}`, 'fix the YAML syntax at this position'));
    }
    return list.done(this.file);
  }

  /**
   * Problems of the parsed structure that must be caught before the document becomes a JS value
   * (each would crash, hang or silently change that value), in one iterative pass over the nodes.
   */
  structureDiagnostics(): Diagnostic[] {
    const list = new DiagnosticList();
    const root = this.doc.contents;
    if (!root) return [];
    interface Frame {
      node: unknown;
      seg: PathSegment | null;
      depth: number;
      /** open: entered, children on the stack; the size sums what the node stands for */
      size: number;
      parent: Frame | null;
      done: boolean;
      /** a key of a mapping: its anchor counts, it is not walked as a value */
      key?: boolean;
    }
    const anchors = new Map<string, Node>();
    /** values an anchored node stands for, once its subtree is walked */
    const sizes = new Map<Node, number>();
    const open = new Set<Node>();
    let aliases = 0;
    let aliasValues = 0;
    let aliasLimitReported = false;
    const pathOf = (f: Frame | null): PathSegment[] => {
      const out: PathSegment[] = [];
      for (let p = f; p; p = p.parent) if (p.seg !== null) out.push(p.seg);
      return out.reverse();
    };
    const problem = (code: CheckCode, node: unknown, frame: Frame | null, message: () => string, hint: string) =>
      list.add(() => this.diagnostic(code, rangeStart(node as Node) ?? null, message(), hint, pathOf(frame)));

    const stack: Frame[] = [{ node: root, seg: null, depth: 1, size: 0, parent: null, done: false }];
    while (stack.length) {
      const f = stack[stack.length - 1];
      if (f.done) {
        stack.pop();
        if (isCollection(f.node)) open.delete(f.node);
        if ((f.node as Node | null)?.anchor) sizes.set(f.node as Node, f.size);
        if (f.parent) f.parent.size += f.size;
        continue;
      }
      f.done = true;
      const node = f.node;
      if ((node as Node | null)?.anchor) anchors.set((node as Node).anchor!, node as Node);
      if (f.key) {
        // checked with its mapping (see below); a collection or alias key is an error there
        f.size = 1;
        const bad = isScalar(node) ? numberProblem(node) : null;
        if (bad) problem('E_FIELD', node, f, () => bad.message, bad.hint);
        continue;
      }
      if (isAlias(node)) {
        aliases++;
        const target = anchors.get(node.source);
        if (aliases > LIMITS.aliases) {
          if (!aliasLimitReported)
            problem('E_LIMIT', node, f, () => `more than ${LIMITS.aliases} aliases (*name) in one file`, 'write the values out, or use fewer anchors and aliases');
          aliasLimitReported = true;
        } else if (!target) {
          problem(
            'E_FIELD',
            node,
            f,
            () => `alias *${quote(node.source)} refers to no anchor: &${quote(node.source)} must be set before it`,
            `add &${quote(node.source)} to a value above, or write the value here`,
          );
        } else if (open.has(target)) {
          problem(
            'E_FIELD',
            node,
            f,
            () => `alias *${quote(node.source)} is inside the value it refers to`,
            'an alias cannot repeat a value that contains it: write the value out',
          );
        } else {
          f.size = sizes.get(target) ?? 1;
          aliasValues += f.size;
          if (aliasValues > LIMITS.aliasValues && !aliasLimitReported) {
            aliasLimitReported = true;
            problem(
              'E_LIMIT',
              node,
              f,
              () => `the aliases of this file stand for more than ${LIMITS.aliasValues} values`,
              'write the values out, or use fewer anchors and aliases',
            );
          }
        }
        continue;
      }
      f.size = 1;
      if (isScalar(node)) {
        const bad = numberProblem(node);
        if (bad) problem('E_FIELD', node, f, () => bad.message, bad.hint);
        continue;
      }
      if (!isCollection(node)) continue;
      if (f.depth > LIMITS.depth) {
        // reported once per subtree that is too deep: its children are not walked
        problem('E_LIMIT', node, f, () => `the values here are nested more than ${LIMITS.depth} levels deep (mappings and lists inside each other)`, 'flatten the structure');
        continue;
      }
      open.add(node);
      const children: Frame[] = [];
      if (isMap(node)) {
        const seen = new Map<string, Node>();
        for (const pair of node.items) {
          const key = pair.key as Node | null;
          const k = keyString(key);
          const keyFrame: Frame = { node: key, seg: k ?? null, depth: f.depth + 1, size: 0, parent: f, done: false, key: true };
          if (k === undefined) {
            problem('E_FIELD', key, keyFrame, () => 'a key must be a plain string, not a list, a mapping or an alias', 'write the key as a string');
          } else if (k === '__proto__') {
            problem('E_FIELD', key, keyFrame, () => 'the key "__proto__" is not allowed', 'rename the key');
          } else {
            const first = seen.get(k);
            if (first) {
              const line = this.position(rangeStart(first) ?? 0).line;
              problem('E_FIELD', key, keyFrame, () => `duplicate key "${quote(k)}" (first at line ${line})`, 'remove one of the two, or rename it');
            } else if (key) seen.set(k, key);
          }
          children.push(keyFrame, { node: pair.value, seg: k ?? '?', depth: f.depth + 1, size: 0, parent: f, done: false });
        }
      } else if (isSeq(node)) {
        node.items.forEach((item, i) => children.push({ node: item, seg: i, depth: f.depth + 1, size: 0, parent: f, done: false }));
      }
      // document order: the first child on top
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
    return list.done(this.file);
  }

  /** The plain JS value of the document (null for an empty file); call after structureDiagnostics found nothing. */
  toJS(): unknown {
    // aliases were counted and bounded by structureDiagnostics, which yaml's own count (its
    // maxAliasCount) would reject for legitimate files with a dozen aliases
    return this.doc.toJS({ maxAliasCount: -1 });
  }

  /**
   * Expands `${VAR}` / `${VAR:-default}` in every string value (never in keys), in place, so
   * positions stay those of the original scalars.
   */
  expandEnv(env: Env): Diagnostic[] {
    const list = new DiagnosticList();
    visit(this.doc, {
      Scalar: (key, node, ancestors) => {
        if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return;
        const { value, missing, refused } = expandEnv(node.value, env);
        node.value = value;
        for (const name of refused) {
          list.add(() => {
            const path = fieldPath(ancestors, node);
            const field = fieldName(path);
            return this.diagnostic(
              'E_ENV_NAME',
              node.range?.[0] ?? null,
              `${field} expands \${${quote(name)}}, a variable project files may not read: \${VAR} takes only ${envPattern('expand')}`,
              `write the value itself, or export it under an allowed name (e.g. MY_PROVIDER_BASE_URL) and expand that`,
              path,
            );
          });
        }
        for (const name of missing) {
          list.add(() =>
            this.diagnostic(
              'E_FIELD',
              node.range?.[0] ?? null,
              `environment variable ${quote(name)} is not set and "\${${quote(name)}}" has no default`,
              `set ${quote(name)}, or write "\${${quote(name)}:-default}" to give it a default`,
              fieldPath(ancestors, node),
            ),
          );
        }
      },
    });
    return list.done(this.file);
  }

  /** The node at a path (the value), or undefined. */
  nodeAt(path: readonly PathSegment[]): Node | undefined {
    let node: unknown = this.doc.contents;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = this.pairOf(node, String(seg));
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
    const pair = this.pairOf(parent, last);
    return (pair?.key ?? undefined) as Node | undefined;
  }

  /** The first pair of a mapping with this key, through an index built on first use. */
  private pairOf(map: YAMLMap, key: string): Pair | undefined {
    let index = this.pairIndex.get(map);
    if (!index) {
      index = new Map();
      for (const p of map.items) {
        const k = isPair(p) ? keyString(p.key) : undefined;
        if (k !== undefined && !index.has(k)) index.set(k, p);
      }
      this.pairIndex.set(map, index);
    }
    return index.get(key);
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

/** A field path as a message names it: `base_url`, `simulate.scripts.m[0].text`. */
function fieldName(path: readonly PathSegment[]): string {
  if (path.length === 0) return 'the file';
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i ? '.' : ''}${quote(s, 40)}`)).join('');
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

/** Integers in decimal only (no 0x1F, 0o17, 017); finite numbers only (no .inf, .nan). */
function numberProblem(node: Scalar): { message: string; hint: string } | null {
  if (typeof node.value !== 'number') return null;
  const source = typeof node.source === 'string' ? node.source : String(node.value);
  const leadingZero = /^[-+]?0\d/.test(source);
  if (node.format === 'HEX' || node.format === 'OCT' || leadingZero) {
    return {
      message: `${quote(source)} is not a decimal number: write integers in decimal`,
      hint: Number.isFinite(node.value) ? `write ${node.value}${leadingZero ? ' (no leading zero)' : ''}` : 'write a decimal number',
    };
  }
  if (!Number.isFinite(node.value)) return { message: `${quote(source)} is not a finite number`, hint: 'write a finite number' };
  return null;
}

/** A key as the JS value has it (yaml's toJS: null → "", others by String). */
function keyString(key: unknown): string | undefined {
  if (isScalar(key)) return key.value === null ? '' : String(key.value);
  if (typeof key === 'string' || typeof key === 'number') return String(key);
  return undefined;
}

function rangeStart(node: Node | undefined): number | null {
  if (!node || !node.range) return null;
  // `key:` with nothing after it has an empty null value: point at the key instead
  if (isScalar(node) && node.value === null && node.range[0] === node.range[1]) return null;
  return node.range[0];
}
