// The run loop (DESIGN.md §3, §10): validate the input, then proceed in turns — every node whose
// `needs` are settled runs concurrently in the same turn — routing around failed nodes through
// `on_fail`, and recording every fact as it happens when a database is given.
import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Db } from '@/db/client';
import { runStore, type RunStore } from '@/db/run-store';
import { callNode } from '@/lib/engine/call-node';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { Clock, EngineEvent, NodeResult, ResolvedProvider, SharedPauses } from '@/lib/engine/types';
import { agentPolicy, renderTemplate, type FlowDef, type Project } from '@/lib/project';
import { NodeRecorder } from './recorder';
import { buildRunRecord, sumUsage, type NodeFacts, type RunFacts, type RunRecord } from './run-record';

export class RunInputError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'RunInputError';
  }
}

export class UnknownFlowError extends Error {
  constructor(readonly flow: string, known: string[]) {
    super(`unknown flow "${flow}"; the project has: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownFlowError';
  }
}

export type ProgressEvent =
  | { type: 'run_start'; runId: string; flow: string }
  | { type: 'turn_start'; turn: number; nodes: string[] }
  | { type: 'node_skipped'; node: string; reason: string }
  | { type: 'engine'; node: string; event: EngineEvent }
  | { type: 'node_end'; node: string; result: NodeResult }
  | { type: 'run_end'; record: RunRecord };

export interface RunFlowOptions {
  project: Project;
  flow: string;
  input: unknown;
  /** overrides project.providers (e.g. routed to the simulator) */
  providers?: Record<string, ResolvedProvider>;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  fetch?: typeof fetch;
  gate?: RateGate;
  /** where to record; null or absent = recording off */
  db?: Db | null;
  runId?: string;
  onProgress?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
}

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const inputValidators = new WeakMap<FlowDef, ValidateFunction>();

/** Checks a run input against the flow's input schema; throws RunInputError naming the field. */
export function validateRunInput(flow: FlowDef, input: unknown): void {
  if (!flow.inputSchema) return;
  let validate = inputValidators.get(flow);
  if (!validate) {
    validate = ajv.compile(flow.inputSchema);
    inputValidators.set(flow, validate);
  }
  if (validate(input)) return;
  const err = validate.errors![0]!;
  const missing = err.keyword === 'required' ? `/${(err.params as { missingProperty: string }).missingProperty}` : '';
  const field = `input${(err.instancePath + missing).replace(/\//g, '.')}`;
  const what = err.keyword === 'required' ? 'is required' : err.message ?? 'is invalid';
  throw new RunInputError(`${field} ${what} (flow ${flow.name}, ${flow.file})`, field);
}

function pausesOf(store: RunStore | null): SharedPauses | undefined {
  return store ? { get: (m) => store.getPause(m), set: (m, until, reason) => store.setPause(m, until, reason) } : undefined;
}

export async function runFlow(opts: RunFlowOptions): Promise<RunRecord> {
  const { project } = opts;
  const flow = project.flows[opts.flow];
  if (!flow) throw new UnknownFlowError(opts.flow, Object.keys(project.flows));
  validateRunInput(flow, opts.input);

  const now = opts.clock ? () => opts.clock!.now() : Date.now;
  const store = opts.db ? runStore(opts.db) : null;
  const sharedPauses = pausesOf(store);
  const providers = opts.providers ?? project.providers;
  const emit = opts.onProgress ?? (() => {});
  const runId = opts.runId ?? randomUUID();

  const facts: RunFacts = {
    id: runId,
    flow: flow.name,
    status: 'running',
    input: opts.input,
    output: null,
    error: null,
    turns: 0,
    startedAt: now(),
    finishedAt: null,
    nodes: [],
  };
  store?.insertRun({ id: runId, project: project.name, flow: flow.name, input: opts.input, startedAt: facts.startedAt });
  emit({ type: 'run_start', runId, flow: flow.name });

  const ids = Object.keys(flow.nodes);
  const state = new Map<string, NodeFacts>();
  const onFailTargets = new Set(ids.map((id) => flow.nodes[id]!.onFail).filter((x): x is string => !!x));
  const activated = new Set<string>();
  const outputs: Record<string, { output: unknown }> = {};
  const settled = (id: string) => state.get(id)?.status;
  const nodeRunIds = new Map<string, string>();

  const skip = (id: string, turn: number, reason: string) => {
    const node = flow.nodes[id]!;
    // the policy is kept so the fallback chain can show every model as never tried
    const policy = agentPolicy(project.agents[node.agent]!);
    const n: NodeFacts = {
      id, agent: node.agent, turn, status: 'skipped', output: null, error: null, policy, attempts: [],
      startedAt: now(), finishedAt: now(),
    };
    state.set(id, n);
    facts.nodes.push(n);
    store?.insertNode({ id: randomUUID(), runId, nodeId: id, agent: node.agent, turn, status: 'skipped', policy, startedAt: n.startedAt });
    emit({ type: 'node_skipped', node: id, reason });
  };

  const runNode = async (id: string, turn: number): Promise<void> => {
    const node = flow.nodes[id]!;
    const agent = project.agents[node.agent]!;
    const policy = agentPolicy(agent);
    const nodeRunId = randomUUID();
    nodeRunIds.set(id, nodeRunId);
    const n: NodeFacts = {
      id, agent: agent.name, turn, status: 'running', output: null, error: null, policy, attempts: [],
      startedAt: now(), finishedAt: null,
    };
    state.set(id, n);
    facts.nodes.push(n);
    store?.insertNode({ id: nodeRunId, runId, nodeId: id, agent: agent.name, turn, status: 'running', policy, startedAt: n.startedAt });
    const recorder = store ? new NodeRecorder(store, runId, nodeRunId, now) : null;
    const prompt = renderTemplate(node.prompt, { input: opts.input, nodes: outputs });
    const result = await callNode(
      {
        nodeId: id,
        agent: agent.name,
        agentFile: agent.file,
        policy,
        system: agent.system,
        settings: agent.settings,
        prompt,
        outputSchema: node.output,
        stream: node.stream,
      },
      {
        providers,
        clock: opts.clock,
        fetch: opts.fetch,
        env: opts.env,
        gate: opts.gate,
        sharedPauses,
        signal: opts.signal,
        onEvent: (event) => {
          // kept as they finish, so a node the engine gives up on midway still shows its attempts
          if (event.type === 'attempt_end') n.attempts.push(event.attempt);
          const written = recorder?.onEvent(event);
          emit({ type: 'engine', node: id, event });
          return written; // the engine waits until a finished attempt is committed
        },
      },
    );
    n.status = result.status;
    n.output = result.status === 'succeeded' ? result.output : null;
    n.error = result.error;
    n.attempts = result.attempts;
    n.finishedAt = now();
    if (result.status === 'succeeded') outputs[id] = { output: result.output };
    store?.finishNode({ id: nodeRunId, status: result.status, output: n.output, error: result.error, usage: result.usage, finishedAt: n.finishedAt });
    emit({ type: 'node_end', node: id, result });
  };

  let failedNode: NodeFacts | null = null;
  let internal: unknown = null;
  try {
    for (;;) {
      // a node that needs a failed or skipped node is skipped; repeat until nothing changes
      for (let changed = true; changed; ) {
        changed = false;
        for (const id of ids) {
          if (state.has(id)) continue;
          const bad = flow.nodes[id]!.needs.find((d) => settled(d) === 'failed' || settled(d) === 'skipped');
          if (bad) {
            skip(id, facts.turns, `needs ${bad}, which ${settled(bad) === 'failed' ? 'failed' : 'was skipped'}`);
            changed = true;
          }
        }
      }
      if (failedNode) break;
      const ready = ids.filter(
        (id) =>
          !state.has(id) &&
          (!onFailTargets.has(id) || activated.has(id)) &&
          flow.nodes[id]!.needs.every((d) => settled(d) === 'succeeded'),
      );
      if (ready.length === 0) break;
      const turn = ++facts.turns;
      store?.setRunTurns(runId, turn);
      emit({ type: 'turn_start', turn, nodes: ready });
      // allSettled: a node that throws must not leave its siblings writing after the run is closed
      const settledTurn = await Promise.allSettled(ready.map((id) => runNode(id, turn)));
      const broken = settledTurn.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (broken) throw broken.reason;
      for (const id of ready) {
        const n = state.get(id)!;
        if (n.status !== 'failed') continue;
        const route = flow.nodes[id]!.onFail;
        if (route && !state.has(route)) activated.add(route);
        else failedNode ??= n;
      }
    }
  } catch (err) {
    internal = err;
  }

  // nodes never reached: on_fail targets whose node did not fail, and nodes after a run failure
  for (const id of ids) if (!state.has(id)) skip(id, 0, onFailTargets.has(id) && !failedNode ? 'its on_fail source did not fail' : 'the run stopped');

  facts.finishedAt = now();
  if (internal) {
    const message = internal instanceof Error ? internal.message : String(internal);
    const hint = 'The engine stopped unexpectedly; the attempts recorded so far are kept.';
    const stuck = facts.nodes.find((n) => n.status === 'running');
    for (const n of facts.nodes.filter((x) => x.status === 'running')) {
      n.status = 'failed';
      n.error = { code: 'internal_error', message, hint };
      n.finishedAt = facts.finishedAt;
      store?.finishNode({ id: nodeRunIds.get(n.id)!, status: 'failed', output: null, error: n.error, usage: sumUsage(n.attempts.map((a) => a.usage)), finishedAt: n.finishedAt });
    }
    facts.status = 'failed';
    facts.error = { code: 'internal_error', node: stuck?.id ?? null, message, hint };
  } else if (failedNode) {
    facts.status = 'failed';
    facts.error = { code: failedNode.error!.code, node: failedNode.id, message: failedNode.error!.message, hint: failedNode.error!.hint };
  } else {
    facts.status = 'succeeded';
    const needed = new Set(ids.flatMap((id) => flow.nodes[id]!.needs));
    facts.output = Object.fromEntries(ids.filter((id) => !needed.has(id) && outputs[id]).map((id) => [id, outputs[id]!.output]));
  }
  const record = buildRunRecord(facts);
  await store?.finishRun({
    id: runId,
    status: facts.status,
    output: facts.output,
    error: facts.error,
    turns: facts.turns,
    usage: sumUsage([record.usage]),
    finishedAt: facts.finishedAt,
  });
  emit({ type: 'run_end', record });
  return record;
}
