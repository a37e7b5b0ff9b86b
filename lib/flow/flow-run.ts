// One run in progress (DESIGN: flows/NAME.yaml, Storage): its facts as they happen, the turns the
// schedule (lib/flow/schedule.ts) reads off them, and the writes that record them. A run whose facts
// can no longer be written (StorageError) or are refused (its lease was lost) is stopped at once; a
// stop from outside ends it `interrupted`; a hand-back stops it without ending it (run-phase.ts).
import { explainHint } from '@/lib/shared/run-codes';
import { INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { LeaseLostError } from '@/db/run-lease';
import { runStore, type RunStore } from '@/db/run-store';
import { StorageError } from '@/db/storage-error';
import type { NodeFacts, RunError } from '@/db/types';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { parseTraceparent } from '@/lib/contracts/traceparent';
import { callNode } from '@/lib/engine/call-node';
import { endsNode } from '@/lib/engine/policy';
import type { AttemptRefusal, ResolvedProvider, SharedPauses } from '@/lib/engine/types';
import { sumUsage, sumUsageRounded } from '@/lib/engine/usage';
import { agentPolicy, type FlowDef, type Project } from '@/lib/project';
import { builtinAdapters } from '@/lib/providers';
import { capFailureText, redact } from '@/lib/redact';
import { newRecordId } from '@/lib/shared/record-id';
import { budgetCaller } from '@/lib/shared/spend-budget';
import { nodeCall, pausesOf } from './node-call';
import { NodeRecorder } from './recorder';
import { RunHandedBack, RunInterruptedError, RunNotRecordedError } from './run-errors';
import { watchRun } from './run-observers';
import { firstFacts, restoreNodes, type LiveFacts } from './run-facts';
import type { ProgressEvent, RunFlowOptions } from './run-options';
import { isStopped, stoppedBy, stopWords, type RunPhase, type StoppedPhase } from './run-phase';
import { buildRunRecord, type RunRecord } from './run-record';
import { nextStep, planOf, resumedTurn, routing, unreached, type FlowPlan } from './schedule';

/** A stopped run as closed (closeStopped), and whether that was committed — or refused, the run having changed hands. */
interface Closing {
  record: RunRecord;
  written: Promise<{ recorded: boolean; lost: LeaseLostError | null }>;
}

export class FlowRun {
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
  private phase: RunPhase = { kind: 'running' };
  /** the run as closed after a stop, and the commit of that (set once) */
  private closing: Closing | null = null;
  private readonly recorders = new Map<string, NodeRecorder>();
  /**
   * Commits of attempts their node ended on, which the engine did not wait for: each joins the
   * commit of what follows it — the run's end — or is awaited before the next turn starts a node
   * (DESIGN: Storage, "Durable points"). Their rejections are handled where they are awaited.
   */
  private held: { node: string; written: Promise<void> }[] = [];
  private readonly facts: LiveFacts;
  private readonly plan: FlowPlan;
  /** every node of the flow that ran, runs or was skipped */
  private readonly state: Map<string, NodeFacts>;
  private readonly nodeRunIds: Map<string, string>;
  /** outputs of succeeded nodes (and given ones), as templates read them (`nodes.<id>.output`) */
  private readonly outputs: Record<string, { output: unknown }>;
  /** a taken-over run's nodes that were running (or pending): they restart on their own row */
  private readonly restarting: Map<string, NodeFacts>;
  /** a taken-over run's running nodes that the flow no longer has: failed when the run is adopted */
  private readonly orphans: NodeFacts[];
  /**
   * The budget check before each attempt (DESIGN: The dashboard, "Spend budgets"): the run's caller
   * — who started it, a user or a token — and today's spend, read from the database every time, so
   * the spend of every process counts; absent when the run is not recorded or nobody's budget applies.
   */
  private readonly admit: (() => Promise<AttemptRefusal | null>) | undefined;

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
    this.runId = opts.runId ?? newRecordId();
    this.plan = planOf(flow, opts.only);
    const outer = opts.signal;
    if (outer) {
      const fromOuter = () =>
        this.stop(outer.reason instanceof RunInterruptedError ? outer.reason : new RunInterruptedError(outer.reason instanceof Error ? outer.reason.message : 'stopped'));
      if (outer.aborted) fromOuter();
      else outer.addEventListener('abort', fromOuter, { once: true });
    }
    this.facts = firstFacts(opts, flow, this.runId, this.now());
    // the caller's span the run continues: given, or stored with the queued or taken-over run
    const parent = parseTraceparent(opts.traceparent ?? opts.resume?.facts.traceparent);
    // the caller's listener first, then the process's observers (traces, metrics, logs, alerts)
    const { listener: watched, traceId } = watchRun({
      runId: this.runId,
      project: this.project.name,
      flow: flow.name,
      kind: this.facts.kind ?? 'flow',
      agents: Object.fromEntries(Object.entries(flow.nodes).map(([id, n]) => [id, n.agent])),
      startedBy: this.facts.startedBy,
      startedAt: this.facts.startedAt,
      resumed: !!opts.resume,
      db: db ?? null,
      config: this.project,
      parent,
    });
    // a taken-over run nobody traces here keeps the trace it was recorded with
    this.facts.traceId = traceId ?? this.facts.traceId ?? null;
    this.facts.traceparent = parent?.header ?? null;
    const told = opts.onProgress;
    this.emit = watched && told ? (e) => (told(e), watched(e)) : (told ?? watched ?? (() => {}));
    ({ nodeRunIds: this.nodeRunIds, state: this.state, restarting: this.restarting, orphans: this.orphans, outputs: this.outputs } = restoreNodes(flow, opts.resume));
    for (const [id, output] of Object.entries(opts.only?.outputs ?? {})) this.outputs[id] = { output };
    const caller = this.facts.startedBy ?? null;
    this.admit = db && budgetCaller(caller) ? () => callerLimits(db, caller, 'attempt', { now: this.now() }) : undefined;
  }

  /** Records the run's start; queued before runFlow's first await, so a caller can flush it at once. */
  start(): void {
    const { runId, flow, facts } = this;
    if (this.store) {
      const onLost = (err: Error) => this.stop(err);
      if (this.opts.lease) {
        const nodeRunIds = [...this.restarting.values(), ...this.orphans].map((n) => this.nodeRunIds.get(n.id)!);
        this.store.adoptRun({ id: runId, lease: this.opts.lease, onLost, nodeRunIds, traceId: facts.traceId });
        const message = (id: string) => `the run was taken over under a project whose flow ${flow.name} has no node ${id}`;
        for (const n of this.orphans) this.failNodes([n], { code: INTERRUPTED_NODE_ERROR.code, message: message(n.id), hint: INTERRUPTED_NODE_ERROR.hint }, this.now());
      } else {
        const { kind, replayOf, replayNode, startedAt, snapshotId, projectHash, startedBy, traceId, traceparent } = facts;
        this.started = this.store.insertRun({
          id: runId,
          project: this.project.name,
          flow: flow.name,
          input: this.opts.input,
          startedAt,
          snapshotId,
          projectHash,
          startedBy,
          traceId,
          traceparent,
          onLost,
          ...(this.opts.runKind && { kind, replayOf, replayNode }),
        });
      }
    }
    this.emit({ type: 'run_start', runId, flow: flow.name });
  }

  /** Stops the run: no new turn starts, the engine's calls are aborted; settle() records why. */
  stop(reason: Error): void {
    if (isStopped(this.phase)) return;
    this.phase = stoppedBy(reason);
    this.ac.abort(reason);
  }

  /**
   * Stops the run without ending it (StartedRun.handBack): resolves once `done` has settled — the
   * attempts in flight closed and committed, then the lease released (settleHandedBack).
   */
  async handBack(why: string, done: Promise<RunRecord>): Promise<void> {
    if (this.phase.kind === 'running') this.stop(new RunHandedBack(why));
    await done.then(
      () => undefined,
      () => undefined,
    );
  }

  /** The turns, then the settling; never throws for an engine failure (the run is failed with it). */
  async loop(): Promise<RunRecord> {
    let internal: unknown = null;
    try {
      if (this.restarting.size > 0) {
        const ready = this.nextTurn();
        const resumed = resumedTurn(this.plan, this.nodeFacts(), this.facts.turns, ready);
        if (resumed.length > 0) await this.runTurn(resumed, this.facts.turns);
      }
      for (let ready = this.nextTurn(); ready.length > 0; ready = this.nextTurn()) await this.runTurn(ready);
    } catch (err) {
      // the run still ends and is recorded: settle() fails it with internal_error
      internal = err;
    }
    return this.settle(internal);
  }

  /** A process about to exit: records the run interrupted synchronously, with what is known. */
  interruptNow(why: string): void {
    this.stop(new RunInterruptedError(why));
    this.closeStopped((this.phase as StoppedPhase).reason);
    void this.store?.flush(); // SQLite commits before this returns
  }

  private nodeFacts(): NodeFacts[] {
    return [...this.state.values()];
  }

  /** The next turn's nodes, the nodes it blocks recorded as skipped first; none once the run failed or was stopped. */
  private nextTurn(): string[] {
    const step = nextStep(this.plan, this.nodeFacts());
    for (const s of step.skip) this.skip(s.id, this.facts.turns, s.reason);
    return this.phase.kind === 'running' ? step.ready : [];
  }

  /** Runs `ready` concurrently as one turn (a new one, or `resumed`: a taken-over run's). */
  private async runTurn(ready: string[], resumed?: number): Promise<void> {
    // the attempts the last turn's nodes ended on are committed before any node of this one calls a model
    await this.heldCommitted();
    const turn = resumed ?? ++this.facts.turns;
    if (resumed === undefined) this.store?.setRunTurns(this.runId, turn);
    const at = this.now();
    this.emit({ type: 'turn_start', turn, nodes: ready, at });
    // allSettled: a node that throws must not leave its siblings writing after the run is closed
    const settledTurn = await Promise.allSettled(ready.map((id) => this.runNode(id, turn, at)));
    const broken = settledTurn.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (broken) throw broken.reason;
  }

  /** Skips the nodes never reached, decides the run's status, error and output, and records its end. */
  private async settle(internal: unknown): Promise<RunRecord> {
    if (this.phase.kind === 'handed-back') return this.settleHandedBack(this.phase.reason);
    if (this.phase.kind === 'running' && (internal instanceof StorageError || internal instanceof LeaseLostError)) this.stop(internal);
    if (isStopped(this.phase)) return this.settleStopped(this.phase.reason);
    this.phase = { kind: 'settling' };
    const { facts } = this;
    // the failure the run ends with, as the turns left it (the nodes never reached are skipped after)
    const { failed } = routing(this.plan, this.nodeFacts());
    this.skipUnreached();
    facts.finishedAt = this.now();
    const status = internal || failed ? 'failed' : 'succeeded';
    facts.status = status;
    if (internal) {
      facts.error = this.failStuckNodes(internal, facts.finishedAt);
    } else if (failed) {
      const { error } = this.state.get(failed)!;
      facts.error = { code: error!.code, node: failed, message: error!.message, hint: error!.hint };
    } else {
      facts.output = this.leafOutputs();
    }
    const record = buildRunRecord(facts);
    // one commit: the run's end, the attempts its last nodes ended on, and their nodes' ends
    const [run, nodes] = await Promise.allSettled([this.finishRun(status, record), this.heldCommitted()]);
    const lost = nodes.status === 'rejected' ? nodes.reason : run.status === 'rejected' ? run.reason : null;
    if (lost) {
      // the last commit was rolled back (a full disk, a lost lease): the run closes as stopped by it
      if (!(lost instanceof StorageError || lost instanceof LeaseLostError)) throw lost;
      this.stop(lost);
      return this.settleStopped(lost);
    }
    this.emit({ type: 'run_end', record });
    return record;
  }

  /** Queues the run's end, `status` as its facts say, its usage as `record` sums it. */
  private finishRun(status: 'succeeded' | 'failed' | 'interrupted', record: RunRecord): Promise<void> | undefined {
    const { facts } = this;
    const usage = sumUsageRounded([record.usage]);
    return this.store?.finishRun({ id: this.runId, status, output: facts.output, error: facts.error, turns: facts.turns, usage, finishedAt: facts.finishedAt! });
  }

  /**
   * A handed-back run: the attempts in flight are closed as interrupted (discarded, their usage
   * kept) and committed with everything queued, then the lease is released. The run and its running
   * nodes stay `running`: the record is the run as this process leaves it.
   */
  private async settleHandedBack(reason: RunHandedBack): Promise<RunRecord> {
    const { message } = stopWords(reason);
    const writes = this.facts.nodes.filter((x) => x.status === 'running').flatMap((n) => this.cutInFlight(n, message));
    this.recorders.clear();
    writes.push(...this.takeHeld());
    await Promise.allSettled(writes);
    // releaseRun commits what is still queued before it releases: the next owner finds it all
    await this.store?.releaseRun(this.runId, this.now()).catch(() => false);
    const record = buildRunRecord(this.facts);
    this.emit({ type: 'run_handed_back', record, reason: message, at: this.now() });
    return record;
  }

  /** A stopped run: its facts closed (closeStopped) and committed; throws when it could not be recorded. */
  private async settleStopped(reason: Error): Promise<RunRecord> {
    const { record, written } = this.closeStopped(reason);
    const { recorded, lost } = await written;
    this.emit({ type: 'run_end', record });
    if (reason instanceof StorageError || reason instanceof LeaseLostError) throw new RunNotRecordedError(reason, record, recorded && reason instanceof StorageError);
    // stopped, and found out while closing that another process had taken the run over
    if (lost) throw new RunNotRecordedError(lost, record, false);
    return record;
  }

  /**
   * Closes a stopped run, synchronously: the attempts in flight are interrupted, the running nodes
   * fail with the stop's code, the rest are skipped, the run ends `interrupted` (or `failed` with
   * cannot_record after a storage failure). Queues the writes; `written` says whether they committed.
   */
  private closeStopped(reason: Error): Closing {
    if (this.closing) return this.closing;
    const { facts } = this;
    const at = this.now();
    const words = stopWords(reason);
    // why each node never reached is skipped, as the turns left it (before the stop fails the running ones)
    const skips = unreached(this.plan, this.nodeFacts());
    const running = facts.nodes.filter((x) => x.status === 'running');
    const writes = this.failNodes(running, words, at, words.message);
    for (const s of skips) this.skip(s.id, 0, s.reason);
    facts.finishedAt = at;
    const status = reason instanceof StorageError ? 'failed' : 'interrupted';
    facts.status = status;
    facts.error = { code: words.code, node: running[0]?.id ?? null, message: words.message, hint: words.hint };
    facts.output = null;
    const record = buildRunRecord(facts);
    const ended = this.finishRun(status, record);
    if (ended) writes.push(ended);
    writes.push(...this.takeHeld());
    const written = Promise.all(writes).then(
      () => ({ recorded: true, lost: null }),
      (err: unknown) => ({ recorded: false, lost: err instanceof LeaseLostError ? err : null }),
    );
    this.closing = { record, written };
    return this.closing;
  }

  /** The attempts of `n` in flight, closed as interrupted with `message` and added to its facts; their commit. */
  private cutInFlight(n: NodeFacts, message: string): Promise<void>[] {
    const cut = this.recorders.get(n.id)?.interrupt(message);
    if (!cut) return [];
    n.attempts.push(...cut.attempts);
    return [cut.written];
  }

  /** Fails `nodes` with `error` at `at`, their usage as recorded; with `cut`, their attempts in flight are closed first with it. */
  private failNodes(nodes: NodeFacts[], error: NodeFacts['error'], at: number, cut?: string): Promise<void>[] {
    const writes: Promise<void>[] = [];
    for (const n of nodes) {
      if (cut !== undefined) writes.push(...this.cutInFlight(n, cut));
      Object.assign(n, { status: 'failed', error, finishedAt: at });
      const usage = sumUsageRounded(n.attempts.map((a) => a.usage));
      this.store?.finishNode({ id: this.nodeRunIds.get(n.id)!, runId: this.runId, status: 'failed', output: null, error, usage, finishedAt: at });
    }
    return writes;
  }

  /** The commit of the attempt `node` ended on, which the engine did not wait for: kept until what follows it is committed. */
  private hold(node: string, written: Promise<void>): void {
    written.catch(() => undefined); // handled where it is awaited
    this.held.push({ node, written });
  }

  /** The held commits, taken (closing a stopped run awaits them with its own writes). */
  private takeHeld(): Promise<void>[] {
    const held = this.held;
    this.held = [];
    return held.map((h) => h.written);
  }

  /**
   * The held commits, taken: resolves once all are committed. When one failed, the nodes that ended
   * on them are running again — their ends were rolled back with it — so that closing the run after
   * the storage failure fails them with it, as when the engine had waited for the commit itself.
   */
  private async heldCommitted(): Promise<void> {
    const nodes = this.held.map((h) => h.node);
    const settled = await Promise.allSettled(this.takeHeld());
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!failed) return;
    for (const id of nodes) {
      Object.assign(this.state.get(id)!, { status: 'running', output: null, error: null, finishedAt: null });
      delete this.outputs[id];
    }
    throw failed.reason;
  }

  /** Nodes never reached: on_fail targets whose node did not fail, and nodes after a run failure. */
  private skipUnreached(): void {
    for (const s of unreached(this.plan, this.nodeFacts())) this.skip(s.id, 0, s.reason);
  }

  private skip(id: string, turn: number, reason: string): void {
    const node = this.flow.nodes[id]!;
    // the policy is kept so the fallback chain can show every model as never tried
    const policy = agentPolicy(this.project.agents[node.agent]!);
    const at = this.now();
    const n: NodeFacts = { id, agent: node.agent, turn, status: 'skipped', output: null, error: null, policy, attempts: [], startedAt: at, finishedAt: at };
    this.state.set(id, n);
    this.facts.nodes.push(n);
    const ord = this.plan.ids.indexOf(id);
    this.store?.insertNode({ id: newRecordId(), runId: this.runId, nodeId: id, agent: node.agent, turn, ord, status: 'skipped', policy, startedAt: n.startedAt });
    this.emit({ type: 'node_skipped', node: id, reason, at });
  }

  /** Node `id`'s facts as it starts at `startedAt`: a restarted node's stored ones on its own row, or new ones on a new row. */
  private nodeStart(id: string, turn: number, startedAt: number): { n: NodeFacts; nodeRunId: string; restarted: boolean } {
    const agent = this.project.agents[this.flow.nodes[id]!.agent]!;
    const policy = agentPolicy(agent);
    // a node of a taken-over run restarts on its own row, after its stored attempts
    const restarted = this.restarting.get(id);
    this.restarting.delete(id);
    const nodeRunId = restarted ? this.nodeRunIds.get(id)! : newRecordId();
    this.nodeRunIds.set(id, nodeRunId);
    const n: NodeFacts = restarted ?? { id, agent: agent.name, turn, status: 'running', output: null, error: null, policy, attempts: [], startedAt, finishedAt: null };
    n.policy = policy;
    if (!restarted) {
      this.state.set(id, n);
      this.facts.nodes.push(n);
      const ord = this.plan.ids.indexOf(id);
      this.store?.insertNode({ id: nodeRunId, runId: this.runId, nodeId: id, agent: agent.name, turn, ord, status: 'running', policy, startedAt: n.startedAt });
    }
    return { n, nodeRunId, restarted: !!restarted };
  }

  /** Runs one node through the engine from `startedAt` (its turn's start), recording its facts as they happen. */
  private async runNode(id: string, turn: number, startedAt: number): Promise<void> {
    const { opts, emit, runId } = this;
    const { n, nodeRunId, restarted } = this.nodeStart(id, turn, startedAt);
    const earlier = restarted ? [...n.attempts] : [];
    const recorder = this.store ? new NodeRecorder(this.store, runId, nodeRunId, this.now) : null;
    if (recorder) this.recorders.set(id, recorder);
    const call = nodeCall(this.project, this.flow, id, n.policy!, { input: opts.input, nodes: this.outputs }, restarted ? earlier : null);
    const { clock, fetch, env, gate } = opts;
    const deps = { providers: this.providers, adapters: builtinAdapters, clock, fetch, env, gate, sharedPauses: this.sharedPauses, signal: this.ac.signal, admit: this.admit };
    const result = await callNode(call, {
      ...deps,
      onEvent: (event) => {
        // kept as they finish, so a node the engine gives up on midway still shows its attempts
        if (event.type === 'attempt_end') n.attempts.push(event.attempt);
        const written = recorder?.onEvent(event);
        emit({ type: 'engine', node: id, event });
        // the engine waits until a finished attempt is committed before it tries again; the
        // attempt a node ends on is committed with the node's end and what follows it
        if (written && event.type === 'attempt_end' && endsNode(event.attempt.action)) {
          this.hold(id, written);
          return;
        }
        return written;
      },
    });
    this.recorders.delete(id);
    if (this.closing) return; // the run was closed meanwhile (a process about to exit)
    n.status = result.status;
    n.output = result.status === 'succeeded' ? result.output : null;
    n.error = result.error;
    n.attempts = [...earlier, ...result.attempts];
    n.finishedAt = this.now();
    if (result.status === 'succeeded') this.outputs[id] = { output: result.output };
    // a restarted node's usage counts its earlier attempts too (the cut-off one's as recorded)
    const usage = restarted ? sumUsage(n.attempts.map((a) => a.usage)) : result.usage;
    this.store?.finishNode({ id: nodeRunId, runId, status: result.status, output: n.output, error: result.error, usage, finishedAt: n.finishedAt });
    emit({ type: 'node_end', node: id, result, at: n.finishedAt });
  }

  /** After an engine bug the nodes still running fail with internal_error; returns the run's error. */
  private failStuckNodes(err: unknown, at: number): RunError {
    // failure text like any other (DESIGN: Redaction): what an exception says may quote anything
    const message = capFailureText(redact(err instanceof Error ? err.message : String(err)));
    const hint = explainHint('internal_error', 'The engine stopped unexpectedly; the attempts recorded so far are kept.');
    const stuck = this.facts.nodes.filter((n) => n.status === 'running');
    this.failNodes(stuck, { code: 'internal_error', message, hint }, at);
    return { code: 'internal_error', node: stuck[0]?.id ?? null, message, hint };
  }

  /** A succeeded run's output: the outputs of its leaf nodes (succeeded nodes no node needs). */
  private leafOutputs(): Record<string, unknown> {
    const { flow, outputs } = this;
    const ids = this.plan.ids;
    const needed = new Set(ids.flatMap((id) => flow.nodes[id]!.needs));
    return Object.fromEntries(ids.filter((id) => !needed.has(id) && outputs[id]).map((id) => [id, outputs[id]!.output]));
  }
}
