// Writes the policy form's fields back into an agent file (DESIGN: "The dashboard"). Edits are made as
// small splices of the original text — a changed value replaces only its own characters, an added
// key is one new line — so comments, alignment, quoting, key order and keys the form does not know
// stay byte for byte, and the stored policy revision's diff shows only what changed. A layout the
// splices do not handle (flow collections, block scalars) falls back to re-printing the YAML
// Document, which still keeps comments and other keys.
import { isMap, isScalar, isSeq, parseDocument, Scalar, stringify, YAMLMap, YAMLSeq, type Document, type Node, type Pair } from 'yaml';
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
const OUTPUT_KEYS = ['strict', 'retries', 'on_error', 'on_refusal', 'on_truncated'] as const;

/** Splices can't express this layout; use the Document instead. */
class NeedsReprint extends Error {}

interface Edit {
  start: number;
  end: number;
  text: string;
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

/** The quoting the file already uses for strings (from `model`, `kind` or `apiVersion`). */
function stringStyle(doc: Document): Scalar.Type {
  for (const key of ['model', 'kind', 'apiVersion']) {
    const node = doc.get(key, true);
    if (isScalar(node) && typeof node.value === 'string') return node.type === Scalar.QUOTE_SINGLE ? Scalar.QUOTE_SINGLE : node.type === Scalar.PLAIN ? Scalar.PLAIN : Scalar.QUOTE_DOUBLE;
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

/** Replaces a plain or quoted scalar in place; a multi-line scalar can't be spliced. */
function replaceScalar(text: string, node: Node, value: Value, style: Scalar.Type | undefined): Edit | null {
  if (!isScalar(node) || !node.range) throw new NeedsReprint();
  if (node.type === Scalar.BLOCK_FOLDED || node.type === Scalar.BLOCK_LITERAL) throw new NeedsReprint();
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

function blockMap(node: unknown): YAMLMap | null {
  if (!isMap(node)) return null;
  if (node.flow) throw new NeedsReprint();
  return node;
}

function spliceEdits(text: string, doc: Document.Parsed, changes: AgentYamlChanges): Edit[] {
  const root = blockMap(doc.contents)!;
  const style = stringStyle(doc);
  const edits: Edit[] = [];
  const push = (e: Edit | null) => e && edits.push(e);
  const withNewline = (t: string) => (t.endsWith('\n') || t === '' ? t : `${t}\n`);

  if (changes.model !== undefined) {
    const pair = pairOf(root, 'model');
    if (!pair?.value) throw new NeedsReprint();
    push(replaceScalar(text, pair.value, changes.model, style));
  }

  if (changes.fallback_models !== undefined) {
    const models = changes.fallback_models ?? [];
    const pair = pairOf(root, 'fallback_models');
    if (!pair) {
      if (models.length) {
        const model = pairOf(root, 'model');
        const at = model?.value?.range ? lineEnd(text, contentEnd(model.value)) : text.length;
        const lines = `fallback_models:\n${models.map((m) => `- ${render(m, style)}\n`).join('')}`;
        push({ start: at, end: at, text: at === text.length ? withNewline(text.slice(-1) === '\n' || !text ? '' : '\n') + lines : lines });
      }
    } else if (!models.length) {
      push(removePair(text, pair));
    } else {
      const seq = pair.value;
      if (!isSeq(seq) || seq.flow || !seq.items.length || !seq.range) throw new NeedsReprint();
      const items = seq.items as Node[];
      const first = items[0];
      if (!first.range) throw new NeedsReprint();
      const dash = text.lastIndexOf('-', first.range[0]);
      const indent = text.slice(lineStart(text, dash), dash);
      if (indent.trim() !== '') throw new NeedsReprint();
      models.forEach((m, i) => {
        if (i < items.length) push(replaceScalar(text, items[i], m, (items[i] as Scalar).type === Scalar.PLAIN ? style : undefined));
      });
      if (items.length > models.length) {
        const from = lineStart(text, text.lastIndexOf('-', items[models.length].range![0]));
        push({ start: from, end: lineEnd(text, contentEnd(items[items.length - 1])), text: '' });
      } else if (models.length > items.length) {
        const at = lineEnd(text, contentEnd(items[items.length - 1]));
        push({ start: at, end: at, text: withNewline(at === text.length && !text.endsWith('\n') ? '\n' : '') + models.slice(items.length).map((m) => `${indent}- ${render(m, style)}\n`).join('') });
      }
    }
  }

  const out = changes.output;
  if (out && OUTPUT_KEYS.some((k) => out[k] !== undefined)) {
    const pair = pairOf(root, 'output');
    const added = OUTPUT_KEYS.filter((k) => out[k] !== undefined && out[k] !== null);
    if (!pair) {
      if (added.length) {
        const lines = `output:\n${added.map((k) => `  ${k}: ${render(out[k]!, style)}\n`).join('')}`;
        push({ start: text.length, end: text.length, text: (text && !text.endsWith('\n') ? '\n' : '') + lines });
      }
    } else {
      const map = blockMap(pair.value);
      if (!map || !map.items.length) throw new NeedsReprint();
      const pairs = map.items as Pair<Node, Node | null>[];
      const firstKey = pairs[0].key;
      const indent = text.slice(lineStart(text, firstKey.range![0]), firstKey.range![0]);
      const missing: string[] = [];
      let remaining = pairs.length;
      for (const key of OUTPUT_KEYS) {
        const value = out[key];
        if (value === undefined) continue;
        const existing = pairOf(map, key);
        if (value === null) {
          if (existing) {
            push(removePair(text, existing));
            remaining--;
          }
        } else if (existing?.value) push(replaceScalar(text, existing.value, value, style));
        else if (existing) throw new NeedsReprint();
        else missing.push(`${indent}${key}: ${render(value, style)}\n`);
      }
      if (missing.length) {
        const last = pairs[pairs.length - 1];
        const at = lineEnd(text, last.value?.range ? contentEnd(last.value) : last.key.range![1]);
        push({ start: at, end: at, text: (at === text.length && !text.endsWith('\n') ? '\n' : '') + missing.join('') });
      } else if (remaining === 0) {
        // every key removed: drop `output:` itself
        edits.length = 0;
        return spliceEdits(text, doc, { ...changes, output: undefined }).concat(removePair(text, pair));
      }
    }
  }
  return edits;
}

function apply(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  for (let i = 1; i < sorted.length; i++) if (sorted[i].end > sorted[i - 1].start) throw new NeedsReprint();
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** The same changes made on the Document and printed again (comments and other keys survive). */
function reprint(doc: Document.Parsed, changes: AgentYamlChanges): string {
  const style = stringStyle(doc);
  const scalar = (v: Value) => {
    const s = new Scalar(v);
    if (typeof v === 'string' && style !== Scalar.PLAIN) s.type = style;
    return s;
  };
  const set = (path: string[], v: Value | null) => {
    if (v === null) {
      if (doc.hasIn(path)) doc.deleteIn(path);
      return;
    }
    const existing = doc.getIn(path, true);
    if (isScalar(existing) && existing.type !== Scalar.BLOCK_FOLDED && existing.type !== Scalar.BLOCK_LITERAL) existing.value = v;
    else doc.setIn(path, scalar(v));
  };
  if (changes.model !== undefined) set(['model'], changes.model);
  if (changes.fallback_models !== undefined) {
    const models = changes.fallback_models ?? [];
    if (!models.length) doc.delete('fallback_models');
    else {
      const seq = new YAMLSeq();
      seq.items = models.map(scalar);
      doc.set('fallback_models', seq);
    }
  }
  const out = changes.output;
  if (out) {
    if (doc.has('output') && !isMap(doc.get('output', true))) doc.set('output', new YAMLMap());
    for (const key of OUTPUT_KEYS) if (out[key] !== undefined) set(['output', key], out[key]);
    const output = doc.get('output', true);
    if (isMap(output) && output.items.length === 0) doc.delete('output');
  }
  return doc.toString({ indentSeq: false });
}

/** What the file should say after the changes, to check a splice result against. */
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

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function updateAgentYaml(text: string, changes: AgentYamlChanges): string {
  const doc = parse(text);
  // aliases are bounded by readYaml, not by yaml's count (which refuses legitimate files)
  const want = expected(doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown>, changes);
  try {
    const result = apply(text, spliceEdits(text, doc, changes));
    const check = parseDocument(result, YAML_OPTIONS);
    if (!check.errors.length && same(check.toJS({ maxAliasCount: -1 }), want)) return result;
  } catch (err) {
    if (!(err instanceof NeedsReprint)) throw err;
  }
  return reprint(parse(text), changes);
}
