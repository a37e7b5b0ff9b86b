// The checks of a flow file across its own nodes and the project's agents (DESIGN: Project files,
// flows/NAME.yaml): node agents exist, needs and on_fail name nodes and form no cycle, templates
// reference what a node can see, and the input and output JSON Schemas compile. Every walk over
// the nodes is iterative and linear in the nodes and edges, and at most LIMITS.diagnosticsPerFile
// diagnostics are positioned (the rest are counted).
import type { Diagnostic } from './diagnostics';
import { schemaProblems } from './json-schema';
import { templateRefs } from './prompt-template';
import type { FlowFile } from './schema';
import type { JsonSchema } from './types';
import { LIMITS, listNames, quote } from './limits';
import { DiagnosticList, type PathSegment, type YamlSource } from './yaml-source';

export interface FlowContext {
  /** names of the project's agents (files that exist, valid or not); when given, E_FLOW_AGENT is checked */
  agents?: ReadonlySet<string>;
}

function schemaDiagnostics(src: YamlSource, schema: unknown, path: PathSegment[], what: string): Diagnostic[] {
  return schemaProblems(schema).map((p) => {
    // Ajv names the key (a typo'd keyword, an unknown format) when it has no path for it
    const found = p.find ? findKeyPath(src, path, p.find) : null;
    const at = found ?? [...path, ...p.path];
    const hint =
      p.find?.key === 'format'
        ? 'use a known format (date, date-time, time, email, hostname, ipv4, ipv6, uri, uuid, …) or remove it'
        : p.find
          ? `check the spelling of "${p.find.key}": unknown keywords are errors`
          : 'fix the JSON Schema (draft-07, as Ajv reads it)';
    return src.diagnosticAt('E_SCHEMA', at, `${what} does not compile: ${p.message}`, hint, found ? 'key' : 'value');
  });
}

/** Path of the first key named `find.key` (with value `find.value`) under `path`. */
function findKeyPath(src: YamlSource, path: PathSegment[], find: { key: string; value?: string }): PathSegment[] | null {
  const walk = (value: unknown, p: PathSegment[]): PathSegment[] | null => {
    if (value === null || typeof value !== 'object') return null;
    for (const [k, v] of Object.entries(value)) {
      const here = [...p, Array.isArray(value) ? Number(k) : k];
      if (!Array.isArray(value) && k === find.key && (find.value === undefined || v === find.value)) return here;
      const inner = walk(v, here);
      if (inner !== null) return inner;
    }
    return null;
  };
  const root = src.nodeAt(path);
  return root ? walk((root as { toJSON(): unknown }).toJSON(), path) : null;
}

/** Property names a template may reference under a schema, or null when any name is allowed. */
function propertyNames(schema: JsonSchema | undefined): Set<string> | null {
  if (!schema) return new Set();
  const extra = schema.additionalProperties;
  if (extra === true || (extra !== null && typeof extra === 'object')) return null;
  const props = schema.properties;
  return new Set(props && typeof props === 'object' ? Object.keys(props) : []);
}

function templateDiagnostics(src: YamlSource, data: FlowFile, id: string, list: DiagnosticList): void {
  const node = data.nodes[id];
  const path: PathSegment[] = ['nodes', id, 'prompt'];
  const { refs, errors } = templateRefs(node.prompt);
  // positioning searches the prompt's source: only for the diagnostics that are listed
  const add = (raw: string, message: () => string, hint: () => string) => list.add(() => src.diagnostic('E_TEMPLATE', src.offsetOfText(path, raw), message(), hint(), path));
  for (const e of errors)
    add(
      e.raw,
      () => quote(e.message, LIMITS.messageChars),
      () => 'write references as {{ input.name }} or {{ nodes.<id>.output.name }}',
    );
  const inputProps = propertyNames(data.input);
  for (const ref of refs) {
    const [root, a, b, c] = ref.path;
    const raw = quote(ref.raw);
    const bad = (message: string, hint: () => string) => add(ref.raw, () => message, hint);
    if (root === 'input') {
      if (a !== undefined && inputProps && !inputProps.has(a)) {
        bad(`${raw} references input.${quote(a)}, which is not a property of the flow's input schema`, () =>
          inputProps.size
            ? `use one of: ${listNames([...inputProps].map((p) => `input.${p}`))}, or add "${quote(a)}" to input.properties`
            : `add "${quote(a)}" to input.properties`,
        );
      }
    } else if (root === 'nodes') {
      if (a === undefined) {
        bad(`${raw} must name a node: {{ nodes.<id>.output }}`, () => 'write {{ nodes.<id>.output }} or {{ nodes.<id>.output.<field> }}');
      } else if (!Object.hasOwn(data.nodes, a)) {
        bad(`${raw} references node "${quote(a)}", which is not in this flow`, () => `use one of: ${listNames(Object.keys(data.nodes))}`);
      } else if (!node.needs.includes(a)) {
        bad(
          `${raw} references node "${quote(a)}", which is not in the needs of "${quote(id)}"`,
          () => `add ${quote(a)} to nodes.${quote(id)}.needs so its output exists when "${quote(id)}" runs`,
        );
      } else if (b !== 'output') {
        bad(`${raw} must reference the node's output: {{ nodes.${quote(a)}.output… }}`, () => `write {{ nodes.${quote(a)}.output }}`);
      } else if (c !== undefined) {
        const target = data.nodes[a].output;
        if (!target) {
          bad(
            `${raw} references a field, but node "${quote(a)}" produces text (it has no output schema)`,
            () => `write {{ nodes.${quote(a)}.output }}, or give node "${quote(a)}" an output schema`,
          );
        } else {
          const props = propertyNames(target);
          if (props && !props.has(c))
            bad(`${raw} references "${quote(c)}", which is not a property of node "${quote(a)}"'s output schema`, () =>
              props.size ? `use one of: ${listNames([...props])}` : `add "${quote(c)}" to the output schema of "${quote(a)}"`,
            );
        }
      }
    } else {
      bad(`${raw} references "${quote(root)}"; templates can reference input.* and nodes.<id>.output.*`, () => 'write {{ input.name }} or {{ nodes.<id>.output.name }}');
    }
  }
}

type Edge = { from: string; to: string; kind: 'needs' | 'on_fail'; path: PathSegment[] };

/** "Runs after" edges: a node runs after what it needs, an on_fail node after the node it handles (each pair once). */
function runsAfter(data: FlowFile): Map<string, Edge[]> {
  const known = (id: string) => Object.hasOwn(data.nodes, id);
  const after = new Map<string, Edge[]>(Object.keys(data.nodes).map((id) => [id, []]));
  const pairs = new Set<string>();
  const add = (e: Edge) => {
    const key = `${e.from}\u0000${e.to}`;
    if (pairs.has(key)) return;
    pairs.add(key);
    after.get(e.from)!.push(e);
  };
  for (const [id, node] of Object.entries(data.nodes)) {
    node.needs.forEach((to, i) => {
      if (known(to)) add({ from: id, to, kind: 'needs', path: ['nodes', id, 'needs', i] });
    });
    if (node.on_fail && known(node.on_fail) && node.on_fail !== id) {
      add({ from: node.on_fail, to: id, kind: 'on_fail', path: ['nodes', id, 'on_fail'] });
    }
  }
  return after;
}

/**
 * Cycles of "runs after" edges, each reported once, at the edge that closes it. Depth-first
 * with an explicit stack: a chain of 10,000 nodes must not exhaust the call stack.
 */
function cycleDiagnostics(src: YamlSource, data: FlowFile, list: DiagnosticList): void {
  const after = runsAfter(data);
  const describe = (e: Edge) => (e.kind === 'needs' ? `${quote(e.from, 40)} needs ${quote(e.to, 40)}` : `${quote(e.from, 40)} runs when ${quote(e.to, 40)} fails`);
  const shown = 10;
  const state = new Map<string, 'active' | 'done'>();
  /** tree edges from the root of the walk to the current node */
  const trail: Edge[] = [];
  /** for an active node: where its edges start in the trail */
  const entered = new Map<string, number>();
  const seen = new Set<string>();
  const closeCycle = (id: string, edge: Edge) => {
    if (list.full) {
      list.count();
      return;
    }
    const cycle = [...trail.slice(entered.get(edge.to)!), edge];
    const key = cycle
      .map((e) => e.from)
      .sort()
      .join('\u0000');
    if (seen.has(key)) return;
    seen.add(key);
    const listed = cycle.slice(0, shown).map(describe).join(', ') + (cycle.length > shown ? `, … (${cycle.length - shown} more)` : '');
    list.add(() =>
      src.diagnosticAt(
        'E_FLOW_NEEDS',
        edge.path,
        cycle.length === 1 ? `node "${quote(id)}" needs itself` : `nodes form a cycle: ${listed}`,
        cycle.length === 1 ? `remove "${quote(id)}" from nodes.${quote(id)}.needs` : 'remove one of these needs (or the on_fail) so the nodes can run in order',
      ),
    );
  };
  for (const root of Object.keys(data.nodes)) {
    if (state.has(root)) continue;
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    state.set(root, 'active');
    entered.set(root, 0);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const edges = after.get(top.id)!;
      if (top.next === edges.length) {
        state.set(top.id, 'done');
        entered.delete(top.id);
        stack.pop();
        trail.pop();
        continue;
      }
      const edge = edges[top.next++];
      const s = state.get(edge.to);
      if (s === 'active') closeCycle(top.id, edge);
      else if (s === undefined) {
        trail.push(edge);
        state.set(edge.to, 'active');
        entered.set(edge.to, trail.length);
        stack.push({ id: edge.to, next: 0 });
      }
    }
  }
}

/**
 * For each node, the nodes it needs directly or not, as bit sets over the node indexes; nodes in
 * or behind a needs cycle have none (the cycle is reported on its own). Linear in the edges.
 */
function needsClosure(data: FlowFile, ids: string[]): { index: Map<string, number>; reach: (Uint32Array | undefined)[] } {
  const index = new Map(ids.map((id, i) => [id, i]));
  const words = Math.ceil(ids.length / 32);
  const needs = ids.map((id) => [...new Set(data.nodes[id].needs.filter((n) => index.has(n)).map((n) => index.get(n)!))]);
  const dependents: number[][] = ids.map(() => []);
  const waiting = needs.map((list) => list.length);
  needs.forEach((list, i) => list.forEach((n) => dependents[n].push(i)));
  const reach: (Uint32Array | undefined)[] = ids.map(() => undefined);
  const ready = ids.map((_, i) => i).filter((i) => waiting[i] === 0);
  while (ready.length) {
    const i = ready.pop()!;
    const r = new Uint32Array(words);
    for (const n of needs[i]) {
      const rn = reach[n]!;
      for (let w = 0; w < words; w++) r[w] |= rn[w];
      r[n >>> 5] |= 1 << (n & 31);
    }
    reach[i] = r;
    for (const d of dependents[i]) if (--waiting[d] === 0) ready.push(d);
  }
  return { index, reach };
}

/** The needs path from `from` to `to` ([from, …, to]), breadth-first (only for a pair that has one). */
function needsChain(data: FlowFile, from: string, to: string): string[] | null {
  const parent = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let q = 0; q < queue.length; q++) {
    const id = queue[q];
    if (id === to) {
      const chain: string[] = [];
      for (let p: string | null = id; p !== null; p = parent.get(p)!) chain.push(p);
      return chain.reverse();
    }
    if (!Object.hasOwn(data.nodes, id)) continue;
    for (const need of data.nodes[id].needs) {
      if (!parent.has(need)) {
        parent.set(need, id);
        queue.push(need);
      }
    }
  }
  return null;
}

/** Every cross-node problem of a flow file that parsed against its schema (at most LIMITS.diagnosticsPerFile listed). */
export function flowDiagnostics(src: YamlSource, data: FlowFile, ctx: FlowContext): Diagnostic[] {
  const list = new DiagnosticList();
  const out = { push: (...ds: Diagnostic[]) => ds.forEach((d) => list.add(() => d)) };
  out.push(...schemaDiagnostics(src, data.input, ['input'], 'the input schema'));
  const ids = Object.keys(data.nodes);
  const others = (id: string) => listNames(ids.filter((n) => n !== id)) || '(no other nodes)';
  const agentNames = ctx.agents ? listNames([...ctx.agents].sort()) : '';
  const closure = needsClosure(data, ids);
  for (const [id, node] of Object.entries(data.nodes)) {
    if (ctx.agents && !ctx.agents.has(node.agent)) {
      list.add(() =>
        src.diagnosticAt(
          'E_FLOW_AGENT',
          ['nodes', id, 'agent'],
          `node "${quote(id)}" uses agent "${quote(node.agent)}", which does not exist`,
          ctx.agents!.size ? `add agents/${quote(node.agent)}.yaml, or use one of: ${agentNames}` : `add agents/${quote(node.agent)}.yaml`,
        ),
      );
    }
    node.needs.forEach((need, i) => {
      if (!Object.hasOwn(data.nodes, need)) {
        list.add(() =>
          src.diagnosticAt('E_FLOW_NEEDS', ['nodes', id, 'needs', i], `node "${quote(id)}" needs "${quote(need)}", which is not a node of this flow`, `use one of: ${others(id)}`),
        );
      }
    });
    if (node.on_fail !== undefined) {
      const at: PathSegment[] = ['nodes', id, 'on_fail'];
      const onFail = node.on_fail;
      if (!Object.hasOwn(data.nodes, onFail)) {
        list.add(() =>
          src.diagnosticAt('E_FLOW_NEEDS', at, `on_fail of node "${quote(id)}" names "${quote(onFail)}", which is not a node of this flow`, `use one of: ${others(id)}`),
        );
      } else if (onFail === id) {
        list.add(() => src.diagnosticAt('E_FLOW_NEEDS', at, `node "${quote(id)}" names itself in on_fail`, 'name another node to run when this one fails'));
      } else {
        const reach = closure.reach[closure.index.get(onFail)!];
        const i = closure.index.get(id)!;
        if (reach && reach[i >>> 5] & (1 << (i & 31))) {
          list.add(() => {
            const chain = needsChain(data, onFail, id)!;
            const through = chain.length > 2 ? ` (through ${listNames(chain.slice(1, -1))})` : '';
            return src.diagnosticAt(
              'E_FLOW_NEEDS',
              at,
              `node "${quote(onFail)}" runs when "${quote(id)}" fails, but it needs "${quote(id)}"${through}, so it would be skipped`,
              `remove "${quote(chain[1])}" from nodes.${quote(chain[0])}.needs, or route to another node`,
            );
          });
        }
      }
    }
    if (node.output && !list.full) out.push(...schemaDiagnostics(src, node.output, ['nodes', id, 'output'], `the output schema of node "${quote(id)}"`));
    templateDiagnostics(src, data, id, list);
  }
  cycleDiagnostics(src, data, list);
  return list.done(src.file);
}
