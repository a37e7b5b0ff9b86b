// The checks of a flow file across its own nodes and the project's agents (DESIGN: Project files,
// flows/NAME.yaml): node agents exist, needs and on_fail name nodes and form no cycle, templates
// reference what a node can see, and the input and output JSON Schemas compile.
import type { Diagnostic } from './diagnostics';
import { schemaProblems } from './json-schema';
import { templateRefs } from './prompt-template';
import type { FlowFile } from './schema';
import type { JsonSchema } from './types';
import type { PathSegment, YamlSource } from './yaml-source';

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

function templateDiagnostics(src: YamlSource, data: FlowFile, id: string): Diagnostic[] {
  const node = data.nodes[id];
  const path: PathSegment[] = ['nodes', id, 'prompt'];
  const { refs, errors } = templateRefs(node.prompt);
  const at = (raw: string) => src.offsetOfText(path, raw);
  const out: Diagnostic[] = errors.map((e) => src.diagnostic('E_TEMPLATE', at(e.raw), e.message, 'write references as {{ input.name }} or {{ nodes.<id>.output.name }}', path));
  const inputProps = propertyNames(data.input);
  for (const ref of refs) {
    const [root, a, b, c] = ref.path;
    const bad = (message: string, hint: string) => out.push(src.diagnostic('E_TEMPLATE', at(ref.raw), message, hint, path));
    if (root === 'input') {
      if (a !== undefined && inputProps && !inputProps.has(a)) {
        bad(`${ref.raw} references input.${a}, which is not a property of the flow's input schema`, inputProps.size ? `use one of: ${[...inputProps].map((p) => `input.${p}`).join(', ')}, or add "${a}" to input.properties` : `add "${a}" to input.properties`);
      }
    } else if (root === 'nodes') {
      if (a === undefined) {
        bad(`${ref.raw} must name a node: {{ nodes.<id>.output }}`, 'write {{ nodes.<id>.output }} or {{ nodes.<id>.output.<field> }}');
      } else if (!Object.hasOwn(data.nodes, a)) {
        bad(`${ref.raw} references node "${a}", which is not in this flow`, `use one of: ${Object.keys(data.nodes).join(', ')}`);
      } else if (!node.needs.includes(a)) {
        bad(`${ref.raw} references node "${a}", which is not in the needs of "${id}"`, `add ${a} to nodes.${id}.needs so its output exists when "${id}" runs`);
      } else if (b !== 'output') {
        bad(`${ref.raw} must reference the node's output: {{ nodes.${a}.output… }}`, `write {{ nodes.${a}.output }}`);
      } else if (c !== undefined) {
        const target = data.nodes[a].output;
        if (!target) {
          bad(`${ref.raw} references a field, but node "${a}" produces text (it has no output schema)`, `write {{ nodes.${a}.output }}, or give node "${a}" an output schema`);
        } else {
          const props = propertyNames(target);
          if (props && !props.has(c)) bad(`${ref.raw} references "${c}", which is not a property of node "${a}"'s output schema`, props.size ? `use one of: ${[...props].join(', ')}` : `add "${c}" to the output schema of "${a}"`);
        }
      }
    } else {
      bad(`${ref.raw} references "${root}"; templates can reference input.* and nodes.<id>.output.*`, 'write {{ input.name }} or {{ nodes.<id>.output.name }}');
    }
  }
  return out;
}

/**
 * Cycles of "runs after" edges: a node runs after what it needs, and an on_fail node after the
 * node it handles. Each cycle is reported once, at the edge that closes it.
 */
function cycleDiagnostics(src: YamlSource, data: FlowFile): Diagnostic[] {
  type Edge = { from: string; to: string; kind: 'needs' | 'on_fail'; path: PathSegment[] };
  const known = (id: string) => Object.hasOwn(data.nodes, id);
  const after = new Map<string, Edge[]>(Object.keys(data.nodes).map((id) => [id, []]));
  for (const [id, node] of Object.entries(data.nodes)) {
    node.needs.forEach((to, i) => {
      if (known(to)) after.get(id)!.push({ from: id, to, kind: 'needs', path: ['nodes', id, 'needs', i] });
    });
    if (node.on_fail && known(node.on_fail) && node.on_fail !== id) {
      after.get(node.on_fail)!.push({ from: node.on_fail, to: id, kind: 'on_fail', path: ['nodes', id, 'on_fail'] });
    }
  }
  const describe = (e: Edge) => (e.kind === 'needs' ? `${e.from} needs ${e.to}` : `${e.from} runs when ${e.to} fails`);
  const out: Diagnostic[] = [];
  const state = new Map<string, 'active' | 'done'>();
  const trail: Edge[] = [];
  const seen = new Set<string>();
  const visit = (id: string): void => {
    state.set(id, 'active');
    for (const edge of after.get(id)!) {
      if (state.get(edge.to) === 'active') {
        const from = trail.findIndex((e) => e.from === edge.to);
        const cycle = [...(from >= 0 ? trail.slice(from) : []), edge];
        const key = cycle.map((e) => e.from).sort().join(',');
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(
          src.diagnosticAt(
            'E_FLOW_NEEDS',
            edge.path,
            cycle.length === 1 ? `node "${id}" needs itself` : `nodes form a cycle: ${cycle.map(describe).join(', ')}`,
            cycle.length === 1 ? `remove "${id}" from nodes.${id}.needs` : 'remove one of these needs (or the on_fail) so the nodes can run in order',
          ),
        );
      } else if (!state.has(edge.to)) {
        trail.push(edge);
        visit(edge.to);
        trail.pop();
      }
    }
    state.set(id, 'done');
  };
  for (const id of Object.keys(data.nodes)) if (!state.has(id)) visit(id);
  return out;
}

/** The needs path from `from` to `to` ([from, …, to]), if `from` needs `to` directly or not. */
function needsChain(data: FlowFile, from: string, to: string): string[] | null {
  const seen = new Set<string>();
  const walk = (id: string): string[] | null => {
    if (id === to) return [id];
    if (seen.has(id) || !Object.hasOwn(data.nodes, id)) return null;
    seen.add(id);
    for (const need of data.nodes[id].needs) {
      const rest = walk(need);
      if (rest) return [id, ...rest];
    }
    return null;
  };
  return from === to ? null : walk(from);
}

/** Every cross-node problem of a flow file that parsed against its schema. */
export function flowDiagnostics(src: YamlSource, data: FlowFile, ctx: FlowContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  out.push(...schemaDiagnostics(src, data.input, ['input'], 'the input schema'));
  const ids = Object.keys(data.nodes);
  for (const [id, node] of Object.entries(data.nodes)) {
    if (ctx.agents && !ctx.agents.has(node.agent)) {
      out.push(src.diagnosticAt('E_FLOW_AGENT', ['nodes', id, 'agent'], `node "${id}" uses agent "${node.agent}", which does not exist`, ctx.agents.size ? `add agents/${node.agent}.yaml, or use one of: ${[...ctx.agents].sort().join(', ')}` : `add agents/${node.agent}.yaml`));
    }
    node.needs.forEach((need, i) => {
      if (!Object.hasOwn(data.nodes, need)) {
        out.push(src.diagnosticAt('E_FLOW_NEEDS', ['nodes', id, 'needs', i], `node "${id}" needs "${need}", which is not a node of this flow`, `use one of: ${ids.filter((n) => n !== id).join(', ') || '(no other nodes)'}`));
      }
    });
    if (node.on_fail !== undefined) {
      const at: PathSegment[] = ['nodes', id, 'on_fail'];
      if (!Object.hasOwn(data.nodes, node.on_fail)) {
        out.push(src.diagnosticAt('E_FLOW_NEEDS', at, `on_fail of node "${id}" names "${node.on_fail}", which is not a node of this flow`, `use one of: ${ids.filter((n) => n !== id).join(', ') || '(no other nodes)'}`));
      } else if (node.on_fail === id) {
        out.push(src.diagnosticAt('E_FLOW_NEEDS', at, `node "${id}" names itself in on_fail`, 'name another node to run when this one fails'));
      } else {
        const chain = needsChain(data, node.on_fail, id);
        if (chain) {
          const through = chain.length > 2 ? ` (through ${chain.slice(1, -1).join(', ')})` : '';
          out.push(src.diagnosticAt('E_FLOW_NEEDS', at, `node "${node.on_fail}" runs when "${id}" fails, but it needs "${id}"${through}, so it would be skipped`, `remove "${chain[1]}" from nodes.${chain[0]}.needs, or route to another node`));
        }
      }
    }
    if (node.output) out.push(...schemaDiagnostics(src, node.output, ['nodes', id, 'output'], `the output schema of node "${id}"`));
    out.push(...templateDiagnostics(src, data, id));
  }
  out.push(...cycleDiagnostics(src, data));
  return out;
}
