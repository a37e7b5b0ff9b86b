// The run loop (DESIGN: flows/NAME.yaml, Storage): validate the input, then proceed in turns —
// every node whose `needs` are settled runs concurrently in the same turn — routing around failed
// nodes through `on_fail`, and recording every fact as it happens when a database is given.
// A run is recorded or not run: its first row is committed before any provider is called, and a
// run whose facts can no longer be written (StorageError) or are refused (its lease was lost) is
// stopped at once. A stop from outside (a signal: `signal`, or interruptAll) ends it `interrupted`.
import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { LeaseLostError, type Lease } from '@/db/run-lease';
import { runStore, type RunStore } from '@/db/run-store';
import { StorageError } from '@/db/storage-error';
import type { Db, NodeFacts, RunError, RunFacts } from '@/db/types';
import { callNode } from '@/lib/engine/call-node';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { Clock, EngineEvent, NodeResult, ResolvedProvider, SharedPauses } from '@/lib/engine/types';
import { sumUsageRounded } from '@/lib/engine/usage';
import { agentPolicy, renderTemplate, type FlowDef, type Project } from '@/lib/project';
import { builtinAdapters } from '@/lib/providers';
import { capFailureText, redact } from '@/lib/redact';
import { createAjv } from '@/lib/shared/ajv';
import { own } from '@/lib/shared/own';
import { trackRun } from './active-runs';
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

/** A run stopped from outside — a signal, a caller's abort: it ends `interrupted`. */
export class RunInterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunInterruptedError';
  }
}

/**
 * A run that could not be recorded to its end: its facts could not be written (`reason` a
 * StorageError: the run is then recorded as failed with code cannot_record, if even that can be
 * written — `recorded`) or were refused (a LeaseLostError: another process marked it interrupted).
 * `record` is the run as this process saw it.
 */
export class RunNotRecordedError extends Error {
  constructor(
    readonly reason: StorageError | LeaseLostError,
    readonly record: RunRecord,
    readonly recorded: boolean,
  ) {
    super(
      reason instanceof StorageError
        ? `${reason.message}${recorded ? `; run ${record.id} was stopped and is recorded as failed (cannot_record)` : `; run ${record.id} was stopped, and the next start marks it interrupted`}`
        : reason.message,
    );
    this.name = 'RunNotRecordedError';
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
  /** aborting it interrupts the run: attempts in flight are closed, the run ends `interrupted` */
  signal?: AbortSignal;
  /** the project snapshot the run runs under (PostgreSQL mode), recorded with the run */
  snapshotId?: number | null;
  /**
   * The run's row exists already and this lease on it is committed (a worker claimed the queued
   * run): the run carries on under the lease instead of inserting its row (`runId` names it).
   */
  lease?: Lease;
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

/** The store's pauses as the gate reads them; PostgreSQL adds the cluster's hooks (one probe per model across processes). */
function pausesOf(store: RunStore | null): SharedPauses | undefined {
  if (!store) return undefined;
  const shared: SharedPauses = { get: (m) => store.getPause(m), set: (m, until, reason, origin) => store.setPause(m, until, reason, origin) };
  if (store.clusterPauses) shared.cluster = store.clusterPauses;
  return shared;
}

/**
 * The run loop (DESIGN: flows/NAME.yaml): start the run, then turn after turn run every node whose
 * `needs` succeeded, until no node is ready; then settle the run. Throws a StorageError, before any
 * provider is called, when the run cannot be recorded; a RunNotRecordedError when it stopped being
 * recordable mid-way.
 */
export async function runFlow(opts: RunFlowOptions): Promise<RunRecord> {
  return (await beginRun(opts)).done;
}

/**
 * Starts a run and returns once its first row is committed (a StorageError when it cannot be: no
 * provider is called); `done` is the rest of the run, as runFlow's result.
 */
export async function beginRun(opts: RunFlowOptions): Promise<{ runId: string; done: Promise<RunRecord> }> {
  const run = startRun(opts);
  await run.started;
  const done = run.loop();
  trackRun({ runId: run.runId, interrupt: (why) => run.stop(new RunInterruptedError(why)), interruptNow: (why) => run.interruptNow(why), done });
  return { runId: run.runId, done };
}

/** Checks the flow and its input, then records the run's start (queued before the first await). */
function startRun(opts: RunFlowOptions): FlowRun {
  // own entries only: a flow named "constructor" or "__proto__" is not Object.prototype's
  const flow = own(opts.project.flows, opts.flow);
  if (!flow) throw new UnknownFlowError(opts.flow, Object.keys(opts.project.flows));
  validateRunInput(flow, opts.input);
  const run = new FlowRun(opts, flow);
  run.start();
  return run;
}

/** The words of a stop, for the nodes and attempts it cut off. */
function stopWords(reason: Error): { code: string; message: string; hint: string } {
  if (reason instanceof StorageError) {
    return { code: 'cannot_record', message: reason.message, hint: 'Fix the storage problem named above, then start the run again.' };
  }
  const message = reason instanceof RunInterruptedError ? `the run was ${reason.message}` : reason.message;
  return { code: INTERRUPTED_NODE_ERROR.code, message, hint: INTERRUPTED_NODE_ERROR.hint };
}

/** One run in progress: its facts as they happen, and the steps of the run loop over them. */
class FlowRun {
  private readonly project: Project;
  private readonly now: () => number;
  private readonly store: RunStore | null;
  private readonly sharedPauses: SharedPauses | undefined;
  private readonly providers: Record<string, ResolvedProvider>;
  private readonly emit: (e: ProgressEvent) => void;
  readonly runId: string;
  /** the run's first row committed (rejects with a StorageError when it cannot be) */
  started: Promise<void> = Promise.resolve();
  /** aborts the engine's calls when the run is stopped */
  private readonly ac = new AbortController();
  /** why the run was stopped early: a RunInterruptedError, a StorageError or a LeaseLostError */
  private stopReason: Error | null = null;
  /** the run as closed after a stop, and the commit of that (set once) */
  private closing: { record: RunRecord; written: Promise<boolean> } | null = null;
  private readonly recorders = new Map<string, NodeRecorder>();
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
    const outer = opts.signal;
    if (outer) {
      const fromOuter = () => this.stop(outer.reason instanceof RunInterruptedError ? outer.reason : new RunInterruptedError(outer.reason instanceof Error ? outer.reason.message : 'stopped'));
      if (outer.aborted) fromOuter();
      else outer.addEventListener('abort', fromOuter, { once: true });
    }
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
    if (this.store) {
      const onLost = (err: Error) => this.stop(err);
      if (this.opts.lease) this.store.adoptRun({ id: runId, lease: this.opts.lease, onLost });
      else {
        this.started = this.store.insertRun({
          id: runId, project: this.project.name, flow: flow.name, input: this.opts.input, startedAt: facts.startedAt,
          snapshotId: this.opts.snapshotId ?? null, onLost,
        });
      }
    }
    this.emit({ type: 'run_start', runId, flow: flow.name });
  }

  /** Stops the run: no new turn starts, the engine's calls are aborted; settle() records why. */
  stop(reason: Error): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.ac.abort(reason);
  }

  /** The turns, then the settling; never throws for an engine failure (the run is failed with it). */
  async loop(): Promise<RunRecord> {
    try {
      for (let ready = this.nextTurn(); ready.length > 0; ready = this.nextTurn()) await this.runTurn(ready);
    } catch (err) {
      // the run still ends and is recorded: settle() fails it with internal_error
      this.internal = err;
    }
    return this.settle();
  }

  /** A process about to exit: records the run interrupted synchronously, with what is known. */
  interruptNow(why: string): void {
    this.stop(new RunInterruptedError(why));
    this.closeStopped(this.stopReason!);
    void this.store?.flush(); // SQLite commits before this returns
  }

  /** The nodes of the next turn: those whose needs all succeeded; none once the run has failed. */
  nextTurn(): string[] {
    this.skipBlocked();
    if (this.failedNode || this.stopReason) return [];
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
    const internal = this.internal;
    if (!this.stopReason && (internal instanceof StorageError || internal instanceof LeaseLostError)) this.stop(internal);
    if (this.stopReason) return this.settleStopped(this.stopReason);
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

  /** A stopped run: its facts closed (closeStopped) and committed; throws when it could not be recorded. */
  private async settleStopped(reason: Error): Promise<RunRecord> {
    const { record, written } = this.closeStopped(reason);
    const recorded = await written;
    this.emit({ type: 'run_end', record });
    if (reason instanceof StorageError || reason instanceof LeaseLostError) throw new RunNotRecordedError(reason, record, recorded && reason instanceof StorageError);
    return record;
  }

  /**
   * Closes a stopped run, synchronously: the attempts in flight are interrupted, the running nodes
   * fail with the stop's code, the rest are skipped, the run ends `interrupted` (or `failed` with
   * cannot_record after a storage failure). Queues the writes; `written` says whether they committed.
   */
  private closeStopped(reason: Error): { record: RunRecord; written: Promise<boolean> } {
    if (this.closing) return this.closing;
    const { facts } = this;
    const at = this.now();
    const words = stopWords(reason);
    const writes: Promise<void>[] = [];
    for (const n of facts.nodes.filter((x) => x.status === 'running')) {
      const cut = this.recorders.get(n.id)?.interrupt(words.message);
      if (cut) {
        n.attempts.push(...cut.attempts);
        writes.push(cut.written);
      }
      n.status = 'failed';
      n.error = words;
      n.finishedAt = at;
      const usage = sumUsageRounded(n.attempts.map((a) => a.usage));
      this.store?.finishNode({ id: this.nodeRunIds.get(n.id)!, status: 'failed', output: null, error: words, usage, finishedAt: at });
    }
    this.skipUnreached();
    const firstCut = facts.nodes.find((n) => n.error === words);
    facts.finishedAt = at;
    facts.status = reason instanceof StorageError ? 'failed' : 'interrupted';
    facts.error = { code: words.code, node: firstCut?.id ?? null, message: words.message, hint: words.hint };
    facts.output = null;
    const record = buildRunRecord(facts);
    if (this.store) {
      writes.push(
        this.store.finishRun({
          id: this.runId, status: facts.status, output: null, error: facts.error, turns: facts.turns,
          usage: sumUsageRounded([record.usage]), finishedAt: at,
        }),
      );
    }
    const written = Promise.all(writes).then(
      () => true,
      () => false,
    );
    this.closing = { record, written };
    return this.closing;
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
    this.store?.insertNode({ id: randomUUID(), runId: this.runId, nodeId: id, agent: node.agent, turn, ord: this.ids.indexOf(id), status: 'skipped', policy, startedAt: n.startedAt });
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
    this.store?.insertNode({ id: nodeRunId, runId, nodeId: id, agent: agent.name, turn, ord: this.ids.indexOf(id), status: 'running', policy, startedAt: n.startedAt });
    const recorder = this.store ? new NodeRecorder(this.store, runId, nodeRunId, this.now) : null;
    if (recorder) this.recorders.set(id, recorder);
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
        signal: this.ac.signal,
        onEvent: (event) => {
          // kept as they finish, so a node the engine gives up on midway still shows its attempts
          if (event.type === 'attempt_end') n.attempts.push(event.attempt);
          const written = recorder?.onEvent(event);
          emit({ type: 'engine', node: id, event });
          return written; // the engine waits until a finished attempt is committed
        },
      },
    );
    this.recorders.delete(id);
    if (this.closing) return; // the run was closed meanwhile (a process about to exit)
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
    // failure text like any other (DESIGN: Redaction): what an exception says may quote anything
    const message = capFailureText(redact(err instanceof Error ? err.message : String(err)));
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
