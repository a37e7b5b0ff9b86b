// The run loop (DESIGN: flows/NAME.yaml, Storage): validate the input, then proceed in turns —
// every node whose `needs` are settled runs concurrently in the same turn — routing around failed
// nodes through `on_fail`, and recording every fact as it happens when a database is given.
import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { runStore, type RunStore } from '@/db/run-store';
import type { Db, NodeFacts, RunError, RunFacts } from '@/db/types';
import { callNode } from '@/lib/engine/call-node';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { Clock, EngineEvent, NodeResult, ResolvedProvider, SharedPauses } from '@/lib/engine/types';
import { sumUsageRounded } from '@/lib/engine/usage';
import { agentPolicy, renderTemplate, type FlowDef, type Project } from '@/lib/project';
import { builtinAdapters } from '@/lib/providers';
import { createAjv } from '@/lib/shared/ajv';
import { NodeRecorder } from './recorder';
import { buildRunRecord, type RunRecord } from './run-record';

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

const ajv = createAjv('validate');
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

/**
 * The run loop (DESIGN: flows/NAME.yaml): start the run, then turn after turn run every node whose
 * `needs` succeeded, until no node is ready; then settle the run.
 */
export async function runFlow(opts: RunFlowOptions): Promise<RunRecord> {
  const run = startRun(opts);
  try {
    for (let ready = run.nextTurn(); ready.length > 0; ready = run.nextTurn()) await run.runTurn(ready);
  } catch (err) {
    // the run still ends and is recorded: settle() fails it with internal_error
    run.internal = err;
  }
  return run.settle();
}

/** Checks the flow and its input, then records the run's start (queued before the first await). */
function startRun(opts: RunFlowOptions): FlowRun {
  const flow = opts.project.flows[opts.flow];
  if (!flow) throw new UnknownFlowError(opts.flow, Object.keys(opts.project.flows));
  validateRunInput(flow, opts.input);
  const run = new FlowRun(opts, flow);
  run.start();
  return run;
}

/** One run in progress: its facts as they happen, and the steps of the run loop over them. */
class FlowRun {
  private readonly project: Project;
  private readonly now: () => number;
  private readonly store: RunStore | null;
  private readonly sharedPauses: SharedPauses | undefined;
  private readonly providers: Record<string, ResolvedProvider>;
  private readonly emit: (e: ProgressEvent) => void;
  private readonly runId: string;
  private readonly facts: RunFacts;
  /** the flow's node ids, in file order */
  private readonly ids: string[];
  /** every node that ran, runs or was skipped */
  private readonly state = new Map<string, NodeFacts>();
  private readonly nodeRunIds = new Map<string, string>();
  /** nodes named in some on_fail: they run only once their source failed (activated) */
  private readonly onFailTargets: Set<string>;
  private readonly activated = new Set<string>();
  /** outputs of succeeded nodes, as templates read them (`nodes.<id>.output`) */
  private readonly outputs: Record<string, { output: unknown }> = {};
  /** the first node that failed with no on_fail to route around it: no new turn starts */
  private failedNode: NodeFacts | null = null;
  /** what the engine threw, if it did */
  internal: unknown = null;

  constructor(
    private readonly opts: RunFlowOptions,
    private readonly flow: FlowDef,
  ) {
    const { clock, db } = opts;
    this.project = opts.project;
    this.now = clock ? () => clock.now() : Date.now;
    this.store = db ? runStore(db) : null;
    this.sharedPauses = pausesOf(this.store);
    this.providers = opts.providers ?? opts.project.providers;
    this.emit = opts.onProgress ?? (() => {});
    this.runId = opts.runId ?? randomUUID();
    this.ids = Object.keys(flow.nodes);
    this.onFailTargets = new Set(this.ids.map((id) => flow.nodes[id]!.onFail).filter((x): x is string => !!x));
    this.facts = {
      id: this.runId,
      flow: flow.name,
      status: 'running',
      input: opts.input,
      output: null,
      error: null,
      turns: 0,
      startedAt: this.now(),
      finishedAt: null,
      nodes: [],
    };
  }

  /** Records the run's start; queued before runFlow's first await, so a caller can flush it at once. */
  start(): void {
    const { runId, flow, facts } = this;
    this.store?.insertRun({ id: runId, project: this.project.name, flow: flow.name, input: this.opts.input, startedAt: facts.startedAt });
    this.emit({ type: 'run_start', runId, flow: flow.name });
  }

  /** The nodes of the next turn: those whose needs all succeeded; none once the run has failed. */
  nextTurn(): string[] {
    this.skipBlocked();
    if (this.failedNode) return [];
    return this.ids.filter(
      (id) =>
        !this.state.has(id) &&
        (!this.onFailTargets.has(id) || this.activated.has(id)) &&
        this.flow.nodes[id]!.needs.every((d) => this.settled(d) === 'succeeded'),
    );
  }

  /** Runs `ready` concurrently as one turn, then routes each failed node through its on_fail. */
  async runTurn(ready: string[]): Promise<void> {
    const turn = ++this.facts.turns;
    this.store?.setRunTurns(this.runId, turn);
    this.emit({ type: 'turn_start', turn, nodes: ready });
    // allSettled: a node that throws must not leave its siblings writing after the run is closed
    const settledTurn = await Promise.allSettled(ready.map((id) => this.runNode(id, turn)));
    const broken = settledTurn.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (broken) throw broken.reason;
    for (const id of ready) {
      const n = this.state.get(id)!;
      if (n.status !== 'failed') continue;
      const route = this.flow.nodes[id]!.onFail;
      if (route && !this.state.has(route)) this.activated.add(route);
      else this.failedNode ??= n;
    }
  }

  /** Skips the nodes never reached, decides the run's status, error and output, and records its end. */
  async settle(): Promise<RunRecord> {
    const { facts } = this;
    this.skipUnreached();
    facts.finishedAt = this.now();
    if (this.internal) {
      facts.status = 'failed';
      facts.error = this.failStuckNodes(this.internal, facts.finishedAt);
    } else if (this.failedNode) {
      const { id, error } = this.failedNode;
      facts.status = 'failed';
      facts.error = { code: error!.code, node: id, message: error!.message, hint: error!.hint };
    } else {
      facts.status = 'succeeded';
      facts.output = this.leafOutputs();
    }
    const record = buildRunRecord(facts);
    await this.store?.finishRun({
      id: this.runId,
      status: facts.status,
      output: facts.output,
      error: facts.error,
      turns: facts.turns,
      usage: sumUsageRounded([record.usage]),
      finishedAt: facts.finishedAt,
    });
    this.emit({ type: 'run_end', record });
    return record;
  }

  private settled(id: string) {
    return this.state.get(id)?.status;
  }

  /** A node that needs a failed or skipped node is skipped; repeated until nothing changes. */
  private skipBlocked(): void {
    for (let changed = true; changed; ) {
      changed = false;
      for (const id of this.ids) {
        if (this.state.has(id)) continue;
        const bad = this.flow.nodes[id]!.needs.find((d) => this.settled(d) === 'failed' || this.settled(d) === 'skipped');
        if (bad) {
          this.skip(id, this.facts.turns, `needs ${bad}, which ${this.settled(bad) === 'failed' ? 'failed' : 'was skipped'}`);
          changed = true;
        }
      }
    }
  }

  /** Nodes never reached: on_fail targets whose node did not fail, and nodes after a run failure. */
  private skipUnreached(): void {
    for (const id of this.ids) {
      if (!this.state.has(id)) this.skip(id, 0, this.onFailTargets.has(id) && !this.failedNode ? 'its on_fail source did not fail' : 'the run stopped');
    }
  }

  private skip(id: string, turn: number, reason: string): void {
    const node = this.flow.nodes[id]!;
    // the policy is kept so the fallback chain can show every model as never tried
    const policy = agentPolicy(this.project.agents[node.agent]!);
    const n: NodeFacts = {
      id, agent: node.agent, turn, status: 'skipped', output: null, error: null, policy, attempts: [],
      startedAt: this.now(), finishedAt: this.now(),
    };
    this.state.set(id, n);
    this.facts.nodes.push(n);
    this.store?.insertNode({ id: randomUUID(), runId: this.runId, nodeId: id, agent: node.agent, turn, status: 'skipped', policy, startedAt: n.startedAt });
    this.emit({ type: 'node_skipped', node: id, reason });
  }

  /** Runs one node through the engine, recording its facts as they happen. */
  private async runNode(id: string, turn: number): Promise<void> {
    // the names the engine call below reads
    const { opts, providers, sharedPauses, emit, runId } = this;
    const node = this.flow.nodes[id]!;
    const agent = this.project.agents[node.agent]!;
    const policy = agentPolicy(agent);
    const nodeRunId = randomUUID();
    this.nodeRunIds.set(id, nodeRunId);
    const n: NodeFacts = {
      id, agent: agent.name, turn, status: 'running', output: null, error: null, policy, attempts: [],
      startedAt: this.now(), finishedAt: null,
    };
    this.state.set(id, n);
    this.facts.nodes.push(n);
    this.store?.insertNode({ id: nodeRunId, runId, nodeId: id, agent: agent.name, turn, status: 'running', policy, startedAt: n.startedAt });
    const recorder = this.store ? new NodeRecorder(this.store, runId, nodeRunId, this.now) : null;
    const prompt = renderTemplate(node.prompt, { input: opts.input, nodes: this.outputs });
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
        adapters: builtinAdapters,
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
    n.finishedAt = this.now();
    if (result.status === 'succeeded') this.outputs[id] = { output: result.output };
    this.store?.finishNode({ id: nodeRunId, status: result.status, output: n.output, error: result.error, usage: result.usage, finishedAt: n.finishedAt });
    emit({ type: 'node_end', node: id, result });
  }

  /** After an engine bug the nodes still running fail with internal_error; returns the run's error. */
  private failStuckNodes(err: unknown, at: number): RunError {
    const message = err instanceof Error ? err.message : String(err);
    const hint = 'The engine stopped unexpectedly; the attempts recorded so far are kept.';
    const stuck = this.facts.nodes.filter((n) => n.status === 'running');
    for (const n of stuck) {
      n.status = 'failed';
      n.error = { code: 'internal_error', message, hint };
      n.finishedAt = at;
      this.store?.finishNode({ id: this.nodeRunIds.get(n.id)!, status: 'failed', output: null, error: n.error, usage: sumUsageRounded(n.attempts.map((a) => a.usage)), finishedAt: at });
    }
    return { code: 'internal_error', node: stuck[0]?.id ?? null, message, hint };
  }

  /** A succeeded run's output: the outputs of its leaf nodes (succeeded nodes no node needs). */
  private leafOutputs(): Record<string, unknown> {
    const { ids, flow, outputs } = this;
    const needed = new Set(ids.flatMap((id) => flow.nodes[id]!.needs));
    return Object.fromEntries(ids.filter((id) => !needed.has(id) && outputs[id]).map((id) => [id, outputs[id]!.output]));
  }
}
