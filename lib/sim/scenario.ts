// A scenario file (YAML or JSON) for `aqven sim --scenario FILE`: scripts, chaos and latency,
// checked with the schema aqven.yaml's `simulate:` block uses too (script-schema.ts).
import { readFile } from 'node:fs/promises';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { type Scenario, scenarioSchema } from './script-schema';
import { issueProblems } from './validate';

export type { Scenario };

/** `line:col` of the key at the end of `path` (or of its closest existing ancestor) in a YAML document. */
function positionOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): string {
  let node: unknown = doc.contents;
  let start = doc.contents?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    let next: unknown;
    let at: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(path[i]));
      next = pair?.value;
      // the key names the field: point there (also for an unknown key)
      at = pair?.key;
    } else if (isSeq(node) && typeof path[i] === 'number') next = at = node.items[path[i] as number];
    const range = (at as { range?: [number, number] } | undefined)?.range;
    if (!range) break;
    start = range[0];
    node = next;
  }
  const { line, col } = lines.linePos(start);
  return `${line}:${col}`;
}

/** Parses and validates a scenario; errors name the file and every problem, with its line in YAML. */
export function parseScenario(text: string, file: string): Scenario {
  const json = /\.json$/i.test(file);
  const lines = new LineCounter();
  let doc: Document | undefined;
  let raw: unknown;
  try {
    if (json) raw = JSON.parse(text);
    else {
      doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
      if (doc.errors.length) throw doc.errors[0];
      raw = doc.toJS();
    }
  } catch (err) {
    throw new Error(`${file}: cannot parse: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${file}: must be a mapping with scripts, chaos, latency and/or limits`);
  const result = scenarioSchema.safeParse(raw);
  if (result.success) {
    const { chaos, ...rest } = result.data;
    return { ...rest, ...(chaos && { chaos }) };
  }
  const problems = issueProblems(result.error.issues, raw).map((p) => {
    const text = p.path.length === 1 && / unknown key$/.test(p.text) ? `${p.text} (expected scripts, chaos, latency, limits)` : p.text;
    return doc ? `${file}:${positionOf(doc, lines, p.path)}: ${text}` : text;
  });
  throw new Error(`${file}: invalid scenario:\n  ${problems.join('\n  ')}`);
}

export async function loadScenario(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseScenario(text, file);
}
