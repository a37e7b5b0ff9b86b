// The run loop's schedule as a pure function of the stored facts (DESIGN: flows/NAME.yaml): which
// nodes are skipped (a node they need failed or was skipped), which on_fail routes are taken, which
// failed node fails the run, and which nodes run next. A live run and a run taken over after its
// process died (lib/flow/resume.ts) read the same facts the same way: no rule is restated.
import type { NodeStatus } from '@/db/types';
import type { FlowDef } from '@/lib/project';
import { own } from '@/lib/shared/own';
import { BUDGET_CODE } from '@/lib/shared/spend-budget';

/** What the schedule reads of a flow: the nodes this run runs, their needs and on_fail routes. */
export interface FlowPlan {
  /** the node ids this run runs, in file order (a replay: its one node) */
  ids: readonly string[];
  nodes: Readonly<Record<string, { needs: readonly string[]; onFail?: string }>>;
  /** nodes whose outputs are given (a replay's needs): their dependants need not wait for them */
  given: ReadonlySet<string>;
}

/** What the schedule reads of a node's facts: its state, the turn it was in, its error's code. */
export interface NodeFact {
  id: string;
  status: NodeStatus;
  turn: number;
  error: { code: string } | null;
}

export interface Skip {
  id: string;
  reason: string;
}

/** The next step of a run: nodes to record as skipped, the routes taken, the failure that ends it, the next turn. */
export interface Step {
  skip: Skip[];
  /** on_fail targets whose source failed: they may run */
  routed: string[];
  /** the first failed node no route goes around (by turn, then file order): the run fails with it, no new turn starts */
  failed: string | null;
  /** the next turn's nodes: not yet run, their needs succeeded (or given), routed if they are on_fail targets; none once `failed` */
  ready: string[];
}

export function planOf(flow: FlowDef, only?: { node: string; outputs: Record<string, unknown> }): FlowPlan {
  return { ids: only ? [only.node] : Object.keys(flow.nodes), nodes: flow.nodes, given: new Set(Object.keys(only?.outputs ?? {})) };
}

/** The facts of the flow's nodes, by id (a node the flow no longer has is not scheduled). */
function factsById(plan: FlowPlan, facts: Iterable<NodeFact>): Map<string, NodeFact> {
  const byId = new Map<string, NodeFact>();
  for (const n of facts) if (own(plan.nodes, n.id)) byId.set(n.id, n);
  return byId;
}

const onFailTargets = (plan: FlowPlan) => new Set(plan.ids.flatMap((id) => plan.nodes[id]!.onFail ?? []));

/** Nodes not yet run that need a failed or skipped node, in the order they are skipped (repeated until nothing changes). */
export function blocked(plan: FlowPlan, facts: Iterable<NodeFact>): Skip[] {
  const byId = factsById(plan, facts);
  const skips: Skip[] = [];
  const settled = (id: string) => byId.get(id)?.status;
  for (let changed = true; changed;) {
    changed = false;
    for (const id of plan.ids) {
      if (byId.has(id)) continue;
      const bad = plan.nodes[id]!.needs.find((d) => settled(d) === 'failed' || settled(d) === 'skipped');
      if (!bad) continue;
      skips.push({ id, reason: `needs ${bad}, which ${settled(bad) === 'failed' ? 'failed' : 'was skipped'}` });
      byId.set(id, { id, status: 'skipped', turn: Infinity, error: null });
      changed = true;
    }
  }
  return skips;
}

/**
 * The route a failed node takes, or null: its on_fail target, unless its error is a spent budget
 * (the route's attempts would be refused too), the target is not a node this run runs (a replay),
 * or the target had been reached when the node failed — skipped a turn before the failure, or
 * started in or before the failure's turn (another failure's route).
 */
export function routeOf(plan: FlowPlan, facts: ReadonlyMap<string, NodeFact>, failed: NodeFact): string | null {
  const route = failed.error?.code === BUDGET_CODE ? undefined : plan.nodes[failed.id]?.onFail;
  if (!route || !plan.ids.includes(route)) return null;
  const r = facts.get(route);
  const reached = r !== undefined && (r.status === 'skipped' ? r.turn < failed.turn : r.turn <= failed.turn);
  return reached ? null : route;
}

/** The routes taken and the first failed node none goes around. */
export function routing(plan: FlowPlan, facts: Iterable<NodeFact>): Pick<Step, 'routed' | 'failed'> {
  const byId = factsById(plan, facts);
  const routed = new Set<string>();
  let failed: NodeFact | null = null;
  // in file order: of two unrouted failures the earlier turn's fails the run, then the first in the file
  for (const id of plan.ids) {
    const n = byId.get(id);
    if (n?.status !== 'failed') continue;
    const route = routeOf(plan, byId, n);
    if (route) routed.add(route);
    else if (!failed || n.turn < failed.turn) failed = n;
  }
  return { routed: plan.ids.filter((id) => routed.has(id)), failed: failed?.id ?? null };
}

/** The next step from the facts: the blocked nodes skipped first, then the routes, then the next turn. */
export function nextStep(plan: FlowPlan, facts: readonly NodeFact[]): Step {
  const skip = blocked(plan, facts);
  const after = [...facts, ...skip.map((s) => ({ id: s.id, status: 'skipped' as const, turn: Infinity, error: null }))];
  const { routed, failed } = routing(plan, after);
  if (failed) return { skip, routed, failed, ready: [] };
  const byId = factsById(plan, after);
  const targets = onFailTargets(plan);
  const done = (d: string) => byId.get(d)?.status === 'succeeded' || plan.given.has(d);
  const ready = plan.ids.filter((id) => !byId.has(id) && (!targets.has(id) || routed.includes(id)) && plan.nodes[id]!.needs.every(done));
  return { skip, routed, failed, ready };
}

/**
 * A taken-over run's unfinished turn `turn`, given the next step's `ready` nodes: the nodes that
 * restart (running or pending), and those ready ones of the same turn whose rows were never
 * written — all their needs done in earlier turns, and not an on_fail target (a route taken in this
 * turn runs in the next).
 */
export function resumedTurn(plan: FlowPlan, facts: readonly NodeFact[], turn: number, ready: readonly string[]): string[] {
  const byId = factsById(plan, facts);
  const targets = onFailTargets(plan);
  const earlier = (d: string) => (byId.get(d)?.turn ?? 0) < turn;
  const unstarted = new Set(ready.filter((id) => !targets.has(id) && plan.nodes[id]!.needs.every(earlier)));
  const restarts = (id: string) => byId.get(id)?.status === 'running' || byId.get(id)?.status === 'pending';
  return plan.ids.filter((id) => restarts(id) || unstarted.has(id));
}

/** Nodes never reached once the run ends: an on_fail target in a run that did not fail was not needed; any other, the run stopped before it. */
export function unreached(plan: FlowPlan, facts: readonly NodeFact[]): Skip[] {
  const byId = factsById(plan, facts);
  const targets = onFailTargets(plan);
  const { failed } = routing(plan, facts);
  return plan.ids.filter((id) => !byId.has(id)).map((id) => ({ id, reason: targets.has(id) && !failed ? 'its on_fail source did not fail' : 'the run stopped' }));
}
