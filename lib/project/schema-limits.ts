// W_SCHEMA_LIMIT (DESIGN: CLI): a node's output schema asks for more than a model of its agent's
// chain was measured to get right (`aqven limits`): deeper nesting, a longer list or a larger enum.
// One warning per node and dimension, at the part of the schema that asks too much, naming every
// model of the chain that falls short with its figure and date. Pure: the measured limits and the
// flow files' text are passed in.
import { type Diagnostic, type PathSegment, sortDiagnostics } from './diagnostics';
import { quote } from './limits';
import { schemaShape, type SchemaShape } from './schema-shape';
import type { FlowDef, Project } from './types';
import { YamlSource } from './yaml-source';
import { parseModelString } from '../engine/model-string';
import type { LimitDimension, ModelLimit } from '../shared/limits-types';
import { own } from '../shared/own';

/** What the check reads of a measurement. */
export type MeasuredLimit = Pick<ModelLimit, 'model' | 'dimension' | 'status' | 'lastHeld' | 'firstFailed' | 'measuredOn'>;

/** The figure a schema asks for in one dimension, and where. */
interface Asked {
  value: number;
  /** the schema path for a model that held `held` (depth: the first level past it) */
  at(held: number): PathSegment[];
}

function asked(shape: SchemaShape, dimension: LimitDimension): Asked | null {
  if (dimension === 'depth') {
    const { value, levels } = shape.depth;
    return value > 0 ? { value, at: (held) => levels[Math.max(0, Math.min(held, levels.length - 1))] } : null;
  }
  const figure = dimension === 'list' ? shape.list : shape.enum;
  return figure ? { value: figure.value, at: () => figure.path } : null;
}

/**
 * Whether asking `value` goes past a measurement: at or beyond a level that failed, or beyond the
 * last level that held of a finished search (which narrows the two to adjacent levels). A search
 * stopped between them knows nothing of the levels in between; one that never failed found no limit.
 */
export function exceeds(value: number, m: MeasuredLimit): boolean {
  if (m.firstFailed === null) return false;
  return value >= m.firstFailed || (m.status === 'complete' && m.lastHeld !== null && value > m.lastHeld);
}

/** The level a model is known to get right: for positioning the warning. */
const heldOf = (m: MeasuredLimit) => m.lastHeld ?? Math.max(0, (m.firstFailed ?? 1) - 1);

const WHAT: Record<LimitDimension, { asks: (n: number) => string; unit: string }> = {
  depth: { asks: (n) => `nests ${n} levels deep`, unit: 'depth' },
  list: { asks: (n) => `asks for a list of at least ${n} items (minItems)`, unit: 'lists of' },
  enum: { asks: (n) => `offers ${n} values in one enum`, unit: 'enums of' },
};

function measured(m: MeasuredLimit, fallback: boolean): string {
  const who = `${fallback ? 'fallback model' : 'model'} "${quote(m.model)}"`;
  const { unit } = WHAT[m.dimension];
  // exceeds() warns only about a measurement with a level that failed
  const figures = m.lastHeld !== null ? `held ${unit} ${m.lastHeld} and failed at ${m.firstFailed}` : `failed at ${unit} ${m.firstFailed}, the least tried`;
  return `${who} ${figures} (measured ${m.measuredOn}${m.status === 'complete' ? '' : `, ${m.status}`})`;
}

function hint(project: Project, flow: FlowDef, nodeId: string): string {
  const agent = own(project.agents, flow.nodes[nodeId].agent)!;
  const ways = [`split node "${quote(nodeId)}" into nodes that each ask for less`, `raise output.retries in ${agent.file} (now ${agent.output.retries})`];
  if (!agent.output.strict) {
    const ref = parseModelString(agent.model)!;
    const provider = own(project.providers, ref.provider);
    if (provider?.structuredOutputs && own(provider.models, ref.modelId)?.structuredOutputs !== false) {
      ways.push(`set output.strict: true (provider "${quote(provider.name)}" constrains the answer to the schema)`);
    }
  }
  return `${ways.slice(0, -1).join(', ')}, or ${ways.at(-1)}`;
}

/**
 * The W_SCHEMA_LIMIT warnings of a project that passed check, given the newest measurement per
 * model and dimension. `read` gives a flow file's text (only flows that warn are read).
 */
export async function schemaLimitDiagnostics(project: Project, limits: readonly MeasuredLimit[], read: (file: string) => Promise<string | null>): Promise<Diagnostic[]> {
  if (limits.length === 0) return [];
  const byModel = new Map<string, MeasuredLimit>();
  for (const m of limits) byModel.set(`${m.model}\u0000${m.dimension}`, m);
  const out: Diagnostic[] = [];
  for (const flow of Object.values(project.flows)) {
    let src: YamlSource | null | undefined;
    for (const node of Object.values(flow.nodes)) {
      const agent = own(project.agents, node.agent);
      if (!node.output || !agent) continue;
      const shape = schemaShape(node.output);
      const chain = [agent.model, ...agent.fallbackModels];
      for (const dimension of ['depth', 'list', 'enum'] as const) {
        const ask = asked(shape, dimension);
        if (!ask) continue;
        const short = chain
          .map((model, i) => ({ m: byModel.get(`${model}\u0000${dimension}`), fallback: i > 0 }))
          .filter((x): x is { m: MeasuredLimit; fallback: boolean } => x.m !== undefined && exceeds(ask.value, x.m));
        if (short.length === 0) continue;
        if (src === undefined) {
          const text = await read(flow.file);
          src = text === null ? null : new YamlSource(flow.file, text);
        }
        if (!src) continue;
        const held = Math.min(...short.map((x) => heldOf(x.m)));
        const path = ['nodes', node.id, 'output', ...ask.at(held)];
        const message = `the output schema of node "${quote(node.id)}" ${WHAT[dimension].asks(ask.value)}; ${short.map((x) => measured(x.m, x.fallback)).join('; ')}`;
        out.push(src.diagnosticAt('W_SCHEMA_LIMIT', path, message, hint(project, flow, node.id), 'key'));
      }
    }
  }
  return sortDiagnostics(out);
}
