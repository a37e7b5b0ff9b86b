// A run's facts at its start (DESIGN: Storage): a new run's first facts, or a taken-over run's
// stored ones (DESIGN: Storage, "Leases") sorted into what keeps its state and what restarts.
import type { RunLink, RunOrigin, RunTrace } from '@/db/queries';
import type { NodeFacts, RunFacts } from '@/db/types';
import type { FlowDef } from '@/lib/project';
import { own } from '@/lib/shared/own';
import type { ResumeFrom, RunFlowOptions } from './run-options';

export type LiveFacts = RunFacts & RunOrigin & Partial<RunLink> & Partial<RunTrace>;

/** A replay's or a limits probe's link, recorded from its first fact (a taken-over run's kind is read with its row). */
export function runLink(runKind: RunFlowOptions['runKind']): Partial<RunLink> {
  return runKind ? { kind: runKind.kind, replayOf: runKind.replayOf ?? null, replayNode: runKind.replayNode ?? null } : {};
}

/** The run's facts as it starts: a new run's, or a taken-over run's as stored (who started it and under which project kept). */
export function firstFacts(opts: RunFlowOptions, flow: FlowDef, runId: string, now: number): LiveFacts {
  const stored = opts.resume?.facts;
  const link = runLink(opts.runKind);
  if (stored) {
    const origin = { startedBy: stored.startedBy ?? null, projectHash: stored.projectHash ?? null, snapshotId: stored.snapshotId ?? null };
    return { ...stored, ...origin, ...link, id: runId, status: 'running', output: null, error: null, finishedAt: null, nodes: [...stored.nodes] };
  }
  return {
    id: runId,
    flow: flow.name,
    status: 'running',
    input: opts.input,
    output: null,
    error: null,
    turns: 0,
    startedAt: now,
    finishedAt: null,
    nodes: [],
    startedBy: opts.startedBy ?? null,
    projectHash: opts.projectHash ?? null,
    snapshotId: opts.snapshotId ?? null,
    ...link,
  };
}

/** A taken-over run's stored nodes, sorted: every node's row, the flow's nodes by id, those that restart, those the flow no longer has. */
export interface RestoredNodes {
  nodeRunIds: Map<string, string>;
  state: Map<string, NodeFacts>;
  /** running (or pending) nodes of the flow: they restart on their own row, in the turn they were in */
  restarting: Map<string, NodeFacts>;
  /** running (or pending) nodes the flow no longer has (a newer snapshot): failed when the run is adopted */
  orphans: NodeFacts[];
  /** the outputs of the nodes that succeeded, as templates read them */
  outputs: Record<string, { output: unknown }>;
}

export function restoreNodes(flow: FlowDef, resume: ResumeFrom | undefined): RestoredNodes {
  const restored: RestoredNodes = { nodeRunIds: new Map(), state: new Map(), restarting: new Map(), orphans: [], outputs: {} };
  for (const n of resume?.facts.nodes ?? []) {
    // every stored node has its row (the facts are read from the rows)
    restored.nodeRunIds.set(n.id, resume!.nodeRunIds.get(n.id)!);
    const unfinished = n.status === 'running' || n.status === 'pending';
    if (!own(flow.nodes, n.id)) {
      if (unfinished) restored.orphans.push(n);
      continue;
    }
    restored.state.set(n.id, n);
    if (unfinished) restored.restarting.set(n.id, n);
    else if (n.status === 'succeeded') restored.outputs[n.id] = { output: n.output };
  }
  return restored;
}
