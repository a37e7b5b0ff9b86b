// Writes the policy form's fields back into an agent file (DESIGN: "The dashboard"). A save changes
// only the lines of the fields it changes; every other line — comments (own-line and trailing, in
// their columns), long prompts, quoting, key order, keys the form does not know, CRLF line ends —
// stays byte for byte, so the stored policy revision's diff shows only what changed. Three ways of
// writing, tried in order, each accepted only if the result parses to the intended value:
//  1. splices: a changed value replaces only its own characters, an added key or model is one new
//     line, a removed one takes its lines with it (positions from the parsed Document's nodes);
//  2. for a top-level key whose layout the splices do not handle (flow `output: { … }`, flow
//     `fallback_models: [...]`, `output:` with no value), that key's pair is edited in place on the
//     Document and printed again alone — only its own lines change;
//  3. the whole Document printed again (comments and other keys kept), when nothing else holds.
import { isCollection, isMap, isScalar, isSeq, parseDocument, Document, Pair, Scalar, stringify, YAMLMap, YAMLSeq, type Node } from 'yaml';
import type { OutcomePolicy } from '../engine/types';
import { readYaml } from './parse-file';
import { YAML_OPTIONS } from './yaml-source';

/** Fields the form edits; `undefined` leaves a field as it is, `null` removes it (back to its default). */
export interface AgentYamlChanges {
  model?: string;
  /** an empty list removes the key */
  fallback_models?: string[] | null;
  output?: {
    strict?: boolean | null;
    retries?: number | null;
    on_error?: OutcomePolicy | null;
    on_refusal?: OutcomePolicy | null;
    on_truncated?: OutcomePolicy | null;
  };
}

export class AgentYamlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentYamlError';
  }
}

type Value = string | number | boolean;
type TopKey = 'model' | 'fallback_models' | 'output';
const OUTPUT_KEYS = ['strict', 'retries', 'on_error', 'on_refusal', 'on_truncated'] as const;
const TOP_KEYS: readonly TopKey[] = ['model', 'fallback_models', 'output'];

/** Splices can't express this layout; print the key's pair again instead. */
class NeedsReprint extends Error {}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** What every way of writing needs to know about the file. */
interface Source {
  text: string;
  doc: Document.Parsed;
  root: YAMLMap;
  /** the quoting the file already uses for strings */
  style: Scalar.Type;
  /** the file's line end: a CRLF file stays CRLF */
  eol: string;
}

function parse(text: string): Document.Parsed {
  // the loader's checks first (size, syntax, depth, aliases, keys): yaml's own toJS would throw
  // on an alias bomb or build a circular value, which would end the save with an HTTP 500
  const problem = readYaml('agent file', text).diagnostics[0];
  if (problem) throw new AgentYamlError(`the agent file cannot be edited: line ${problem.line}: ${problem.message.replace(/^YAML syntax error: /, 'not valid YAML: ')}`);
  const doc = parseDocument(text, YAML_OPTIONS);
  if (!isMap(doc.contents)) throw new AgentYamlError('the agent file must be a mapping of keys to values');
  return doc;
}

function source(text: string): Source {
  const doc = parse(text);
  return { text, doc, root: doc.contents as YAMLMap, style: stringStyle(doc), eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** The quoting the file already uses for strings (from `model`, `kind` or `apiVersion`). */
function stringStyle(doc: Document): Scalar.Type {
  for (const key of ['model', 'kind', 'apiVersion']) {
    const node = doc.get(key, true);
    if (isScalar(node) && typeof node.value === 'string')
      return node.type === Scalar.QUOTE_SINGLE ? Scalar.QUOTE_SINGLE : node.type === Scalar.PLAIN ? Scalar.PLAIN : Scalar.QUOTE_DOUBLE;
  }
  return Scalar.QUOTE_DOUBLE;
}

function render(value: Value, style: Scalar.Type | undefined): string {
  if (typeof value !== 'string') return String(value);
  if (style === Scalar.QUOTE_SINGLE) return `'${value.replace(/'/g, "''")}'`;
  if (style === Scalar.PLAIN) {
    const plain = stringify(value).trimEnd();
    if (!plain.includes('\n')) return plain;
  }
  return JSON.stringify(value);
}

/** A new scalar in the file's quoting style. */
function scalar(value: Value, style: Scalar.Type): Scalar {
  const s = new Scalar(value);
  if (typeof value === 'string' && style !== Scalar.PLAIN) s.type = style;
  return s;
}

function pairOf(map: YAMLMap, key: string): Pair<Node, Node | null> | undefined {
  return (map.items as Pair<Node, Node | null>[]).find((p) => isScalar(p.key) && p.key.value === key);
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Offset just past the newline ending the line that holds `offset` (or the end of the text). */
function lineEnd(text: string, offset: number): number {
  const i = text.indexOf('\n', offset);
  return i < 0 ? text.length : i + 1;
}

/** The last character of a node's own content (not the comments after it). */
function contentEnd(node: Node): number {
  const r = node.range!;
  return Math.max(r[0], r[1] - 1);
}

/** Text inserted at `at` that must start on a line of its own. */
function onOwnLine(src: Source, at: number, lines: string): string {
  return at === src.text.length && src.text !== '' && !src.text.endsWith('\n') ? src.eol + lines : lines;
}

const isBlockScalar = (node: Node) => isScalar(node) && (node.type === Scalar.BLOCK_FOLDED || node.type === Scalar.BLOCK_LITERAL);

// ── 1. Splices ────────────────────────────────────────────────────────────────────────────────

/** Replaces a plain or quoted scalar in place; a multi-line scalar can't be spliced. */
function replaceScalar(text: string, node: Node, value: Value, style: Scalar.Type | undefined): Edit | null {
  if (!isScalar(node) || !node.range || isBlockScalar(node)) throw new NeedsReprint();
  if (node.value === value) return null;
  const [start, end] = node.range;
  if (text.slice(start, end).includes('\n')) throw new NeedsReprint();
  const keep = node.type === Scalar.PLAIN && typeof value === 'string' ? style : (node.type as Scalar.Type | undefined);
  const rendered = render(value, typeof value === 'string' ? (keep ?? style) : undefined);
  // keep a trailing comment in its column
  const gap = /^( +)#/.exec(text.slice(end))?.[1];
  if (gap) return { start, end: end + gap.length, text: rendered + ' '.repeat(Math.max(1, gap.length + (end - start) - rendered.length)) };
  return { start, end, text: rendered };
}

/** Removes a `key: value` pair of a block mapping, with every line it spans. */
function removePair(text: string, pair: Pair<Node, Node | null>): Edit {
  const key = pair.key;
  if (!key.range) throw new NeedsReprint();
  const last = pair.value?.range ? contentEnd(pair.value) : key.range[1];
  return { start: lineStart(text, key.range[0]), end: lineEnd(text, last), text: '' };
}

function blockMap(node: unknown): YAMLMap {
  if (!isMap(node) || node.flow || !node.items.length) throw new NeedsReprint();
  return node;
}

function spliceModel(src: Source, model: string): Edit[] {
  const pair = pairOf(src.root, 'model');
  if (!pair?.value) throw new NeedsReprint();
  const e = replaceScalar(src.text, pair.value, model, src.style);
  return e ? [e] : [];
}

/**
 * The fallback chain as whole lines: each model kept moves with its own lines (its trailing
 * comment, and own-line comments above it), a model edited in its place keeps its line's comment,
 * a new one is one new line, a removed one takes its lines with it.
 */
function spliceFallbacks(src: Source, models: string[]): Edit[] {
  const { text, root, style, eol } = src;
  const pair = pairOf(root, 'fallback_models');
  if (!pair) {
    if (!models.length) return [];
    const model = pairOf(root, 'model');
    const at = model?.value?.range ? lineEnd(text, contentEnd(model.value)) : text.length;
    return [{ start: at, end: at, text: onOwnLine(src, at, `fallback_models:${eol}${models.map((m) => `- ${render(m, style)}${eol}`).join('')}`) }];
  }
  if (!models.length) return [removePair(text, pair)];
  const seq = pair.value;
  if (!isSeq(seq) || seq.flow || !seq.items.length) throw new NeedsReprint();
  const items = seq.items as Node[];
  if (!items.every((i) => isScalar(i) && i.range)) throw new NeedsReprint();
  const dashes = items.map((i) => text.lastIndexOf('-', i.range![0]));
  const indent = text.slice(lineStart(text, dashes[0]), dashes[0]);
  if (indent.trim() !== '' || dashes.some((d) => text.slice(lineStart(text, d), d) !== indent)) throw new NeedsReprint();
  // item i owns [bounds[i], bounds[i + 1]): from the end of the line before it (own-line comments
  // above it included) to the end of its own line
  const bounds = [lineStart(text, dashes[0]), ...items.map((i) => lineEnd(text, contentEnd(i)))];
  const segment = (i: number) => text.slice(bounds[i], bounds[i + 1]);
  const values = items.map((i) => (i as Scalar).value);
  const used = new Set<number>();
  const kept = models.map((m) => {
    const j = values.findIndex((v, k) => v === m && !used.has(k));
    if (j >= 0) used.add(j);
    return j;
  });
  const lines = models.map((m, i) => {
    if (kept[i] >= 0) return segment(kept[i]);
    // a model edited in its place (the old one is gone from the chain): keep its line's comment
    if (i < items.length && !used.has(i) && !models.includes(values[i] as string)) {
      used.add(i);
      const e = replaceScalar(text, items[i], m, (items[i] as Scalar).type === Scalar.PLAIN ? style : undefined);
      const seg = segment(i);
      return e ? seg.slice(0, e.start - bounds[i]) + e.text + seg.slice(e.end - bounds[i]) : seg;
    }
    return `${indent}- ${render(m, style)}${eol}`;
  });
  const start = bounds[0];
  const end = bounds[items.length];
  const block = lines.map((l) => (l.endsWith('\n') ? l : l + eol)).join('');
  return block === text.slice(start, end) ? [] : [{ start, end, text: block }];
}

function spliceOutput(src: Source, out: NonNullable<AgentYamlChanges['output']>): Edit[] {
  const { text, root, style, eol } = src;
  const pair = pairOf(root, 'output');
  const added = OUTPUT_KEYS.filter((k) => out[k] !== undefined && out[k] !== null);
  if (!pair) {
    if (!added.length) return [];
    return [{ start: text.length, end: text.length, text: onOwnLine(src, text.length, `output:${eol}${added.map((k) => `  ${k}: ${render(out[k]!, style)}${eol}`).join('')}`) }];
  }
  const map = blockMap(pair.value);
  const pairs = map.items as Pair<Node, Node | null>[];
  const firstKey = pairs[0].key;
  if (!firstKey.range) throw new NeedsReprint();
  const indent = text.slice(lineStart(text, firstKey.range[0]), firstKey.range[0]);
  if (indent.trim() !== '') throw new NeedsReprint();
  const edits: Edit[] = [];
  const missing: string[] = [];
  let removed = 0;
  for (const key of OUTPUT_KEYS) {
    const value = out[key];
    if (value === undefined) continue;
    const existing = pairOf(map, key);
    if (value === null) {
      if (existing) {
        edits.push(removePair(text, existing));
        removed++;
      }
    } else if (existing?.value) {
      const e = replaceScalar(text, existing.value, value, style);
      if (e) edits.push(e);
    } else if (existing) throw new NeedsReprint();
    else missing.push(`${indent}${key}: ${render(value, style)}${eol}`);
  }
  // every key removed: `output:` goes with them
  if (removed === pairs.length && !missing.length) return [removePair(text, pair)];
  if (missing.length) {
    const last = pairs[pairs.length - 1];
    const at = lineEnd(text, last.value?.range ? contentEnd(last.value) : last.key.range![1]);
    edits.push({ start: at, end: at, text: onOwnLine(src, at, missing.join('')) });
  }
  return edits;
}

function spliceKey(src: Source, key: TopKey, changes: AgentYamlChanges): Edit[] {
  if (key === 'model') return spliceModel(src, changes.model!);
  if (key === 'fallback_models') return spliceFallbacks(src, changes.fallback_models ?? []);
  return spliceOutput(src, changes.output!);
}

// ── 2. One key's pair printed again ─────────────────────────────────────────────────────────────

/** The key's new value, made by editing (a copy of) its current node in place; null: remove the key. */
function editedValue(src: Source, key: TopKey, current: Node | null, changes: AgentYamlChanges): Node | null {
  const { style } = src;
  if (key === 'model') {
    if (isScalar(current)) {
      current.value = changes.model!;
      return current;
    }
    return scalar(changes.model!, style);
  }
  if (key === 'fallback_models') {
    const models = changes.fallback_models ?? [];
    if (!models.length) return null;
    const seq = isSeq(current) ? current : new YAMLSeq();
    const old = [...(seq.items as Node[])];
    // a model kept is the same node: its style and comment go with it
    seq.items = models.map((m) => {
      const j = old.findIndex((n) => isScalar(n) && n.value === m);
      return j >= 0 ? old.splice(j, 1)[0] : scalar(m, style);
    });
    return seq;
  }
  const map = isMap(current) ? current : new YAMLMap();
  for (const k of OUTPUT_KEYS) {
    const v = changes.output![k];
    if (v === undefined) continue;
    if (v === null) map.delete(k);
    else {
      const node = map.get(k, true);
      if (isScalar(node) && !isBlockScalar(node)) node.value = v;
      else map.set(k, scalar(v, style));
    }
  }
  return map.items.length ? map : null;
}

/** Replaces only the lines of `key`'s pair with that pair, edited, printed alone. */
function reprintPair(src: Source, key: TopKey, changes: AgentYamlChanges): Edit {
  const { text, root, eol } = src;
  const pair = pairOf(root, key);
  let start: number;
  let end: number;
  let value: Node | null = null;
  let keyNode: Node = new Scalar(key);
  if (pair) {
    if (!pair.key.range) throw new NeedsReprint();
    start = lineStart(text, pair.key.range[0]);
    end = pair.value?.range ? lineEnd(text, contentEnd(pair.value)) : lineEnd(text, pair.key.range[1]);
    keyNode = pair.key.clone() as Node;
    value = pair.value ? (pair.value.clone() as Node) : null;
    // own-line comments after a block collection stay where they are, outside the lines replaced
    if (isCollection(value) && !value.flow) value.comment = undefined;
  } else {
    const model = key === 'fallback_models' ? pairOf(root, 'model') : undefined;
    start = end = model?.value?.range ? lineEnd(text, contentEnd(model.value)) : text.length;
  }
  // the lines above the key (blank, comments) are outside what is replaced
  keyNode.spaceBefore = false;
  keyNode.commentBefore = undefined;
  const next = editedValue(src, key, value, changes);
  if (!next) return { start, end, text: '' };
  const doc = new Document(null, YAML_OPTIONS);
  const map = new YAMLMap();
  map.items.push(new Pair(keyNode, next));
  doc.contents = map;
  // a sequence indented under its key stays so
  const seq = pair?.value;
  const indentSeq = isSeq(seq) && !seq.flow && !!seq.range && seq.range[0] - lineStart(text, seq.range[0]) > pair!.key.range![0] - start;
  const printed = doc.toString({ lineWidth: 0, indentSeq }).replace(/\r?\n/g, eol);
  return { start, end, text: onOwnLine(src, start, printed) };
}

// ── Putting it together ──────────────────────────────────────────────────────────────────────

function applyEdits(text: string, edits: Edit[]): string {
  // from the end backwards; at one offset, the longer edit first so an insertion lands before it,
  // and of two insertions the later one first, so they read in the order they were made
  const sorted = edits.map((e, i) => ({ ...e, i })).sort((a, b) => b.start - a.start || b.end - a.end || b.i - a.i);
  for (let i = 1; i < sorted.length; i++) if (sorted[i].end > sorted[i - 1].start) throw new NeedsReprint();
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

function touched(changes: AgentYamlChanges): TopKey[] {
  const out = changes.output;
  return TOP_KEYS.filter((k) => (k === 'output' ? !!out && OUTPUT_KEYS.some((o) => out[o] !== undefined) : changes[k] !== undefined));
}

/** The file with each touched key spliced (or, where it can't be, its pair printed again). */
function editInPlace(src: Source, changes: AgentYamlChanges, splice: boolean): string {
  const edits = touched(changes).flatMap((key) => {
    if (splice) {
      try {
        return spliceKey(src, key, changes);
      } catch (err) {
        if (!(err instanceof NeedsReprint)) throw err;
      }
    }
    return [reprintPair(src, key, changes)];
  });
  return applyEdits(src.text, edits);
}

/** The same changes made on the whole Document and printed again (comments and other keys survive). */
function reprintAll(src: Source, changes: AgentYamlChanges): string {
  const { doc, style } = src;
  const set = (path: string[], v: Value | null) => {
    if (v === null) {
      if (doc.hasIn(path)) doc.deleteIn(path);
      return;
    }
    const existing = doc.getIn(path, true);
    if (isScalar(existing) && !isBlockScalar(existing)) existing.value = v;
    else doc.setIn(path, scalar(v, style));
  };
  if (changes.model !== undefined) set(['model'], changes.model);
  if (changes.fallback_models !== undefined) {
    const models = changes.fallback_models ?? [];
    if (!models.length) doc.delete('fallback_models');
    else {
      const seq = new YAMLSeq();
      seq.items = models.map((m) => scalar(m, style));
      const existing = pairOf(src.root, 'fallback_models');
      if (existing) existing.value = seq;
      else src.root.items.splice(src.root.items.findIndex((p) => p === pairOf(src.root, 'model')) + 1, 0, new Pair(new Scalar('fallback_models'), seq));
    }
  }
  const out = changes.output;
  if (out) {
    if (doc.has('output') && !isMap(doc.get('output', true))) doc.set('output', new YAMLMap());
    for (const key of OUTPUT_KEYS) if (out[key] !== undefined) set(['output', key], out[key]);
    const output = doc.get('output', true);
    if (isMap(output) && output.items.length === 0) doc.delete('output');
  }
  return doc.toString({ indentSeq: false, lineWidth: 0 }).replace(/\r?\n/g, src.eol);
}

/** What the file should say after the changes, to check a result against. */
function expected(before: Record<string, unknown>, changes: AgentYamlChanges): Record<string, unknown> {
  const after: Record<string, unknown> = structuredClone(before);
  if (changes.model !== undefined) after.model = changes.model;
  if (changes.fallback_models !== undefined) {
    if (changes.fallback_models?.length) after.fallback_models = changes.fallback_models;
    else delete after.fallback_models;
  }
  if (changes.output) {
    const output = { ...((after.output as Record<string, unknown> | undefined) ?? {}) };
    for (const key of OUTPUT_KEYS) {
      const v = changes.output[key];
      if (v === null) delete output[key];
      else if (v !== undefined) output[key] = v;
    }
    if (Object.keys(output).length) after.output = output;
    else delete after.output;
  }
  return after;
}

/** Deep equality of two parsed YAML values: a mapping's key order does not matter, a sequence's does. */
export function sameYamlValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameYamlValue(x, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameYamlValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

// aliases are bounded by readYaml, not by yaml's count (which refuses legitimate files)
const toJS = (doc: Document) => doc.toJS({ maxAliasCount: -1 }) as unknown;

export function updateAgentYaml(text: string, changes: AgentYamlChanges): string {
  const want = expected(toJS(parse(text)) as Record<string, unknown>, changes);
  const holds = (result: string) => {
    const check = parseDocument(result, YAML_OPTIONS);
    return !check.errors.length && sameYamlValue(toJS(check), want);
  };
  for (const splice of [true, false]) {
    try {
      // a fresh Document each time: printing a pair again edits (copies of) its nodes
      const result = editInPlace(source(text), changes, splice);
      if (holds(result)) return result;
    } catch (err) {
      if (!(err instanceof NeedsReprint)) throw err;
    }
  }
  return reprintAll(source(text), changes);
}
