// What the run loop hands the engine for one node (DESIGN: flows/NAME.yaml; lib/engine/call-node.ts):
// the node's call — its agent's policy and prompt, and what a restarted node had done — and the
// store's shared rate-limit pauses.
import type { RunStore } from '@/db/run-store';
import type { AttemptFacts } from '@/db/types';
import { cutOffInFlight } from '@/lib/engine/cut-off-try';
import type { NodeCall, NodePolicy, PriorAnswers, SharedPauses } from '@/lib/engine/types';
import { renderTemplate, type FlowDef, type Project } from '@/lib/project';

/**
 * What a restarted node had done (DESIGN: Storage, "Leases"): its answers — an attempt cut off with
 * a try in flight (write-ahead) among them, as an error, since the provider may have answered — and
 * the seq its new attempts follow.
 */
export function priorAnswers(stored: readonly AttemptFacts[]): PriorAnswers {
  const answered = stored.flatMap((a) => {
    if (cutOffInFlight(a)) return [{ model: a.model, outcome: 'error' as const, error: a.error, responseText: null, tries: a.tries, cutOff: true }];
    return a.outcome === null ? [] : [{ model: a.model, outcome: a.outcome, error: a.error, responseText: a.responseText, tries: a.tries }];
  });
  return { attempts: answered, lastSeq: stored.reduce((m, a) => Math.max(m, a.seq), 0) };
}

/** The store's pauses as the gate reads them; PostgreSQL adds the cluster's hooks (one probe per model across processes). */
export function pausesOf(store: RunStore | null): SharedPauses | undefined {
  if (!store) return undefined;
  const shared: SharedPauses = { get: (m) => store.getPause(m), set: (m, until, reason, origin) => store.setPause(m, until, reason, origin) };
  if (store.clusterPauses) shared.cluster = store.clusterPauses;
  return shared;
}

/**
 * Node `id`'s call under its agent's `policy`: its prompt rendered from the input and the outputs
 * so far; `earlier`, a restarted node's stored attempts.
 */
export function nodeCall(
  project: Project,
  flow: FlowDef,
  id: string,
  policy: NodePolicy,
  scope: { input: unknown; nodes: Record<string, { output: unknown }> },
  earlier: readonly AttemptFacts[] | null,
): NodeCall {
  const node = flow.nodes[id]!;
  const agent = project.agents[node.agent]!;
  return {
    nodeId: id,
    agent: agent.name,
    agentFile: agent.file,
    policy,
    system: agent.system,
    settings: agent.settings,
    prompt: renderTemplate(node.prompt, scope),
    outputSchema: node.output,
    stream: node.stream,
    ...(earlier && { prior: priorAnswers(earlier) }),
  };
}
