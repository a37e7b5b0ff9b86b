// The flow of a run as a graph (DESIGN: The dashboard, "The flow graph"): its nodes and `needs`
// edges, the `on_fail` routes, and each node's state in the run — including the nodes that have
// no row yet (pending while the run is live) or never had one (not reached). The layout is
// layered by `needs` depth, top to bottom: a flow has a handful of nodes, so a layered drawing is
// enough and needs no layout library. Pure.
import type { FlowDef } from '@/lib/project/types';
import type { NodeFacts, RunFacts } from '@/db/types';
import { routeOf, type FlowPlan } from '@/lib/flow/schedule';

export interface FlowShapeNode {
  id: string;
  agent: string;
  needs: string[];
  onFail: string | null;
}

/** The parts of a flow the run page draws (no prompts, no schemas), nodes in file order. */
export interface FlowShape {
  name: string;
  nodes: FlowShapeNode[];
}

export function flowShape(def: Pick<FlowDef, 'name' | 'nodes'>): FlowShape {
  return {
    name: def.name,
    nodes: Object.values(def.nodes).map((n) => ({ id: n.id, agent: n.agent, needs: [...n.needs], onFail: n.onFail ?? null })),
  };
}

/**
 * A node's state in the run, as the graph and the timeline name it:
 * `skipped`: a node it needs failed or was skipped; `not-needed`: an on_fail target whose source
 * did not fail; `not-reached`: the run ended before it; `pending`: not started yet, the run goes on.
 */
export type NodeState = 'succeeded' | 'failed' | 'running' | 'pending' | 'skipped' | 'not-needed' | 'not-reached';

export interface NodeStateView {
  state: NodeState;
  /** the sentence that explains it: "skipped: needs classify, which failed" */
  note: string;
  /** a failed node whose on_fail target ran: the run was routed around it */
  routedTo: string | null;
}

const list = (ids: string[]) => ids.join(', ');

/** Every node's state, for the stored nodes and the flow's nodes without a row. */
export function nodeStates(run: Pick<RunFacts, 'status' | 'nodes' | 'error'>, flow: FlowShape | null): Map<string, NodeStateView> {
  const rows = new Map(run.nodes.map((n) => [n.id, n]));
  const defs = new Map((flow?.nodes ?? []).map((n) => [n.id, n]));
  const sources = new Map<string, string[]>(); // on_fail target → its sources
  for (const n of flow?.nodes ?? []) if (n.onFail) sources.set(n.onFail, [...(sources.get(n.onFail) ?? []), n.id]);
  const plan: FlowPlan | null = flow && {
    ids: flow.nodes.map((n) => n.id),
    nodes: Object.fromEntries(flow.nodes.map((n) => [n.id, { needs: n.needs, ...(n.onFail && { onFail: n.onFail }) }])),
    given: new Set(),
  };
  const live = run.status === 'queued' || run.status === 'running';
  const ran = (id: string) => {
    const r = rows.get(id);
    return r != null && r.status !== 'skipped';
  };
  const out = new Map<string, NodeStateView>();
  const ids = [...new Set([...(flow?.nodes ?? []).map((n) => n.id), ...run.nodes.map((n) => n.id)])];
  for (const id of ids) {
    const row = rows.get(id);
    const def = defs.get(id);
    const src = sources.get(id) ?? [];
    const badNeeds = (def?.needs ?? []).filter((d) => rows.get(d)?.status === 'failed' || rows.get(d)?.status === 'skipped');
    const stopped = run.error?.node ? `the run failed at ${run.error.node} before it` : 'the run ended before it';
    if (row && row.status !== 'skipped') {
      // routed as the run loop routes (lib/flow/schedule.ts), and only once the route ran
      const route = row.status === 'failed' && plan ? routeOf(plan, rows, row) : null;
      const routedTo = route && ran(route) ? route : null;
      const note =
        row.status === 'failed' ? (routedTo ? `failed; the run was routed to ${routedTo} (on_fail)` : 'failed') : row.status === 'pending' ? 'waiting to restart' : row.status;
      out.set(id, { state: row.status === 'pending' ? 'pending' : row.status, note, routedTo });
      continue;
    }
    if (row) {
      // skipped: blocked by a need (a turn > 0), or never reached (turn 0)
      if (badNeeds.length > 0 || row.turn > 0) {
        const why = badNeeds.length
          ? badNeeds.map((d) => `${d}, which ${rows.get(d)!.status === 'failed' ? 'failed' : 'was skipped'}`).join('; ')
          : 'a node it needs failed or was skipped';
        out.set(id, { state: 'skipped', note: `skipped: needs ${why}`, routedTo: null });
      } else if (src.length > 0 && !src.some((s) => rows.get(s)?.status === 'failed')) {
        out.set(id, { state: 'not-needed', note: `not needed: runs only if ${list(src)} fails`, routedTo: null });
      } else {
        out.set(id, { state: 'not-reached', note: `not reached: ${stopped}`, routedTo: null });
      }
      continue;
    }
    // no row: the flow has the node, the run has not started it
    if (!live) {
      out.set(id, { state: 'not-reached', note: `not reached: ${stopped}`, routedTo: null });
      continue;
    }
    const waiting = (def?.needs ?? []).filter((d) => rows.get(d)?.status !== 'succeeded');
    const note =
      src.length > 0 && !src.some((s) => rows.get(s)?.status === 'failed')
        ? `pending: runs only if ${list(src)} fails`
        : waiting.length
          ? `pending: waits for ${list(waiting)}`
          : 'pending: starts in the next turn';
    out.set(id, { state: 'pending', note, routedTo: null });
  }
  return out;
}

/**
 * The flow's nodes the run has no row for yet, as node facts with status `pending` and turn 0,
 * so the timeline can list them (the state — pending or not reached — comes from nodeStates).
 */
export function unstartedNodes(run: Pick<RunFacts, 'nodes'>, flow: FlowShape | null): NodeFacts[] {
  if (!flow) return [];
  const have = new Set(run.nodes.map((n) => n.id));
  return flow.nodes
    .filter((n) => !have.has(n.id))
    .map((n) => ({ id: n.id, agent: n.agent, turn: 0, status: 'pending', output: null, error: null, policy: null, attempts: [], startedAt: null, finishedAt: null }));
}

/** Layer of each node: 0 for a node that needs nothing, else one below its deepest need; an on_fail target sits below its source. */
export function layers(flow: FlowShape): Map<string, number> {
  const defs = new Map(flow.nodes.map((n) => [n.id, n]));
  const sources = new Map<string, string[]>();
  for (const n of flow.nodes) if (n.onFail && defs.has(n.onFail)) sources.set(n.onFail, [...(sources.get(n.onFail) ?? []), n.id]);
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const of = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle (aqven check refuses one): drawn flat rather than looping
    visiting.add(id);
    const above = [...(defs.get(id)?.needs ?? []), ...(sources.get(id) ?? [])].filter((d) => defs.has(d));
    const d = above.length ? Math.max(...above.map(of)) + 1 : 0;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of flow.nodes) of(n.id);
  return depth;
}

export interface GraphNodeBox {
  id: string;
  agent: string;
  layer: number;
  x: number;
  y: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: 'needs' | 'on_fail';
  /** SVG path data */
  d: string;
  /** where the edge's label goes (on_fail edges) */
  labelX: number;
  labelY: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodeW: number;
  nodeH: number;
  nodes: GraphNodeBox[];
  edges: GraphEdge[];
}

const NODE_W = 150;
const NODE_H = 48;
const GAP_X = 22;
const GAP_Y = 46;
const PAD = 8;
/** how far an edge that skips a layer bends aside, so it does not run through the nodes between */
const BEND = 128;
/** space between the ends of edges that meet at one side of a node */
const PORT_GAP = 22;

/** Boxes and edges, top to bottom; each layer centred; a layer's nodes ordered by their parents' places (one barycentre pass). */
export function layoutFlow(flow: FlowShape): GraphLayout {
  const depth = layers(flow);
  const order = new Map(flow.nodes.map((n, i) => [n.id, i]));
  const byLayer: string[][] = [];
  for (const n of flow.nodes) (byLayer[depth.get(n.id)!] ??= []).push(n.id);
  const defs = new Map(flow.nodes.map((n) => [n.id, n]));
  const parents = (id: string) => [...(defs.get(id)?.needs ?? []), ...flow.nodes.filter((n) => n.onFail === id).map((n) => n.id)].filter((p) => defs.has(p));
  const pos = new Map<string, number>();
  byLayer.forEach((ids, layer) => {
    if (layer > 0) {
      const centre = (id: string) => {
        const ps = parents(id).map((p) => pos.get(p) ?? 0);
        return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : order.get(id)!;
      };
      ids.sort((a, b) => centre(a) - centre(b) || order.get(a)! - order.get(b)!);
    }
    ids.forEach((id, i) => pos.set(id, i - (ids.length - 1) / 2));
  });
  const widest = Math.max(1, ...byLayer.map((l) => l?.length ?? 0));
  const edgesRaw: { from: string; to: string; kind: GraphEdge['kind'] }[] = [];
  for (const n of flow.nodes) {
    for (const d of n.needs) if (defs.has(d)) edgesRaw.push({ from: d, to: n.id, kind: 'needs' });
    if (n.onFail && defs.has(n.onFail)) edgesRaw.push({ from: n.id, to: n.onFail, kind: 'on_fail' });
  }
  const long = edgesRaw.some((e) => depth.get(e.to)! - depth.get(e.from)! > 1);
  // a bent edge's curve reaches 3/4 of BEND beyond its nodes' centres: room for that past the widest layer
  const side = long ? Math.max(0, BEND * 0.75 + PORT_GAP - NODE_W / 2) + 10 : 0;
  const inner = widest * NODE_W + (widest - 1) * GAP_X;
  const width = inner + 2 * (PAD + side);
  const cx = width / 2;
  const nodes: GraphNodeBox[] = flow.nodes.map((n) => {
    const layer = depth.get(n.id)!;
    return { id: n.id, agent: n.agent, layer, x: cx + pos.get(n.id)! * (NODE_W + GAP_X) - NODE_W / 2, y: PAD + layer * (NODE_H + GAP_Y) };
  });
  const box = new Map(nodes.map((b) => [b.id, b]));
  // an edge that skips layers bends to the outside (right, then left, in turn)
  let bends = 0;
  const bendOf = edgesRaw.map((e) => (depth.get(e.to)! - depth.get(e.from)! > 1 ? (bends++ % 2 === 0 ? 1 : -1) * BEND : 0));
  // several edges at one node leave from / arrive at points spread along its side, ordered by where the other end lies
  const port = (ends: number[], key: (i: number) => number) => {
    const offset = new Map<number, number>();
    const sorted = [...ends].sort((a, b) => key(a) - key(b));
    sorted.forEach((i, k) => offset.set(i, (k - (sorted.length - 1) / 2) * PORT_GAP));
    return offset;
  };
  const outOffset = new Map<number, number>();
  const inOffset = new Map<number, number>();
  for (const n of nodes) {
    const outs = edgesRaw.map((e, i) => (e.from === n.id ? i : -1)).filter((i) => i >= 0);
    const ins = edgesRaw.map((e, i) => (e.to === n.id ? i : -1)).filter((i) => i >= 0);
    for (const [i, o] of port(outs, (i) => box.get(edgesRaw[i]!.to)!.x + bendOf[i]!)) outOffset.set(i, o);
    for (const [i, o] of port(ins, (i) => box.get(edgesRaw[i]!.from)!.x + bendOf[i]!)) inOffset.set(i, o);
  }
  const edges: GraphEdge[] = edgesRaw.map((e, i) => {
    const a = box.get(e.from)!;
    const b = box.get(e.to)!;
    const sx = a.x + NODE_W / 2 + outOffset.get(i)!;
    const sy = a.y + NODE_H;
    const tx = b.x + NODE_W / 2 + inOffset.get(i)!;
    const ty = b.y;
    const bend = bendOf[i]!;
    const dy = Math.max(ty - sy, 1);
    const d = `M ${r(sx)} ${r(sy)} C ${r(sx + bend)} ${r(sy + dy * 0.45)} ${r(tx + bend)} ${r(ty - dy * 0.45)} ${r(tx)} ${r(ty - 2)}`;
    return { ...e, d, labelX: r((sx + tx) / 2 + bend * 0.75), labelY: r((sy + ty) / 2) };
  });
  const layersCount = byLayer.length;
  return { width: r(width), height: r(2 * PAD + layersCount * NODE_H + (layersCount - 1) * GAP_Y), nodeW: NODE_W, nodeH: NODE_H, nodes, edges };
}

function r(n: number): number {
  return Math.round(n * 10) / 10;
}
