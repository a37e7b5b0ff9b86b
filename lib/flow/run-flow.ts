// The run loop (DESIGN: flows/NAME.yaml, Storage): validate the input, then proceed in turns —
// every node whose `needs` are settled runs concurrently in the same turn — routing around failed
// nodes through `on_fail`, and recording every fact as it happens when a database is given.
// A run is recorded or not run: its first row is committed before any provider is called, and a
// run whose facts can no longer be written (StorageError) or are refused (its lease was lost) is
// stopped at once. A stop from outside (a signal: `signal`, or interruptAll) ends it `interrupted`;
// a hand-back (a worker draining) stops it without ending it, for another worker to resume
// (DESIGN: Storage, "Leases"), and a run taken over from a dead worker carries on from its facts
// (`resume`, lib/flow/resume.ts).
import { INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { LeaseLostError, type Lease } from '@/db/run-lease';
import { runStore, type RunStore } from '@/db/run-store';
import { StorageError } from '@/db/storage-error';
import type { RunLink, RunOrigin } from '@/db/queries';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { inputSizeRefusal, maxInputBytes } from '@/lib/contracts/input-size';
import type { AttemptFacts, Db, NodeFacts, RunError, RunFacts } from '@/db/types';
import { callNode } from '@/lib/engine/call-node';
import { endsNode } from '@/lib/engine/policy';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { AttemptRefusal, Clock, EngineEvent, NodeResult, PriorAnswers, ResolvedProvider, SharedPauses } from '@/lib/engine/types';
import { sumUsage, sumUsageRounded } from '@/lib/engine/usage';
import { compileSchema } from '@/lib/engine/validate';
import { agentPolicy, renderTemplate, type FlowDef, type Project } from '@/lib/project';
import { builtinAdapters } from '@/lib/providers';
import { capFailureText, redact } from '@/lib/redact';
import { own } from '@/lib/shared/own';
import { newRecordId } from '@/lib/shared/record-id';
import { BUDGET_CODE, budgetCaller } from '@/lib/shared/spend-budget';
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
  constructor(
    readonly flow: string,
    known: string[],
  ) {
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
  /** sha256 of the project's files the run runs under (Session.projectHash), recorded with the run */
  projectHash?: string | null;
  /** who starts the run: a user's name, `token:<name>`, `cli:<login>`; recorded with the run */
  startedBy?: string | null;
  /**
   * The run's row exists already and this lease on it is committed (a worker claimed the queued
   * run): the run carries on under the lease instead of inserting its row (`runId` names it).
   */
  lease?: Lease;
  /** the run's stored facts to carry on from (a run taken over under `lease`: lib/flow/resume.ts) */
  resume?: ResumeFrom;
  /** a run that is not a plain flow run (recorded with its kind; counted in no statistic): default kind 'flow' */
  runKind?: { kind: 'replay' | 'limits'; replayOf?: string; replayNode?: string };
  /**
   * Runs this one node of the flow and no other (a replay, lib/flow/replay.ts): the outputs of its
   * needs are given, not run; no on_fail route is followed; the run's output is the node's.
   */
  only?: { node: string; outputs: Record<string, unknown> };
}

/**
 * A run taken over after its owner died (DESIGN: Storage, "Leases"): its facts as stored (the
 * attempts the owner cut off already closed), and the node_runs row of each node that has one.
 * Nodes that succeeded, failed or were skipped keep their state; running (or pending) ones restart
 * on their own row, their models' answers so far counted.
 */
export interface ResumeFrom {
  /** with who started the run and under which project, as first recorded: a take-over keeps them */
  facts: RunFacts & Partial<RunOrigin> & Partial<RunLink>;
  nodeRunIds: ReadonlyMap<string, string>;
}

/** A run started (its first row committed), as beginRun hands it out. */
export interface StartedRun {
  runId: string;
  /** the rest of the run: its record once it ended — or, handed back, as this process left it (status `running`) */
  done: Promise<RunRecord>;
  /**
   * Stops the run without ending it (a worker draining; DESIGN: Storage, "Leases"): the attempts in
   * flight are closed as interrupted (discarded, their usage kept), no new turn starts, the run and
   * its running nodes stay `running`; once that is committed the lease is released, so another
   * worker takes the run over at once and resumes it. Resolves then (at once if the run had ended).
   */
  handBack(reason: string): Promise<void>;
}

export interface InputCheckOptions {
  /**
   * the size bound in bytes (default maxInputBytes()); Infinity for an input stored already (a
   * claimed or taken-over run), which a bound lowered since must not strand
   */
  maxBytes?: number;
}

/**
 * Checks a run input before anything of it is stored, for every way a run starts (API, form, CLI,
 * queue): its JSON text is at most `maxBytes` (RunInputError naming the size and the limit), then
 * it matches the flow's input schema (RunInputError naming the field).
 */
export function validateRunInput(flow: FlowDef, input: unknown, opts: InputCheckOptions = {}): void {
  const tooLarge = inputSizeRefusal(input, opts.maxBytes ?? maxInputBytes());
  if (tooLarge) throw new RunInputError(tooLarge, 'input');
  if (!flow.inputSchema) return;
  // the engine's validators: one Ajv, each schema compiled once
  const validate = compileSchema(flow.inputSchema);
  if (validate(input)) return;
  const err = validate.errors![0]!;
  const missing = err.keyword === 'required' ? `/${(err.params as { missingProperty: string }).missingProperty}` : '';
  const field = `input${(err.instancePath + missing).replace(/\//g, '.')}`;
  const what = err.keyword === 'required' ? 'is required' : (err.message ?? 'is invalid');
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
export async function beginRun(opts: RunFlowOptions): Promise<StartedRun> {
  const run = startRun(opts);
  await run.started;
  const done = run.loop();
  trackRun({ runId: run.runId, interrupt: (why) => run.stop(new RunInterruptedError(why)), interruptNow: (why) => run.interruptNow(why), done });
  return { runId: run.runId, done, handBack: (why) => run.handBack(why, done) };
}

/** Checks the flow and its input, then records the run's start (queued before the first await). */
function startRun(opts: RunFlowOptions): FlowRun {
  // own entries only: a flow named "constructor" or "__proto__" is not Object.prototype's
  const flow = own(opts.project.flows, opts.flow);
  if (!flow) throw new UnknownFlowError(opts.flow, Object.keys(opts.project.flows));
  if (opts.only && !own(flow.nodes, opts.only.node)) throw new Error(`flow ${flow.name} has no node "${opts.only.node}"`);
  // a run under a lease was stored (queued, or taken over) already, a replay's input too: its input is not bounded again
  validateRunInput(flow, opts.input, opts.lease || opts.only ? { maxBytes: Infinity } : {});
  const run = new FlowRun(opts, flow);
  run.start();
  return run;
}

/** A stop that hands the run back (StartedRun.handBack): the run is not ended. */
class RunHandedBack extends RunInterruptedError {
  constructor(reason: string) {
    super(`handed back (${reason}); another worker resumes it`);
  }
}

/** What a restarted node had done (DESIGN: Storage, "Leases"): its answers, and the seq its new attempts follow. */
function priorAnswers(stored: readonly AttemptFacts[]): PriorAnswers {
  const answered = stored.flatMap((a) => (a.outcome === null ? [] : [{ model: a.model, outcome: a.outcome, error: a.error, responseText: a.responseText, tries: a.tries }]));
  return { attempts: answered, lastSeq: stored.reduce((m, a) => Math.max(m, a.seq), 0) };
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
  /** the closing writes were refused: the run had changed hands meanwhile */
  private closingLost: LeaseLostError | null = null;
  private readonly recorders = new Map<string, NodeRecorder>();
  /**
   * Commits of attempts their node ended on, which the engine did not wait for: each joins the
   * commit of what follows it — the run's end — or is awaited before the next turn starts a node
   * (DESIGN: Storage, "Durable points"). Their rejections are handled where they are awaited.
   */
  private held: { node: string; written: Promise<void> }[] = [];
  private readonly facts: RunFacts & RunOrigin & Partial<RunLink>;
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
  /** nodes whose outputs were given (opts.only): their dependants need not wait for them */
  private readonly given: Set<string>;
  /** the first node that failed with no on_fail to route around it: no new turn starts */
  private failedNode: NodeFacts | null = null;
  /** a taken-over run's nodes that were running (or pending): they restart on their own row */
  private readonly restarting = new Map<string, NodeFacts>();
  /** a taken-over run's running nodes that the flow no longer has: failed when the run is adopted */
  private readonly orphans: NodeFacts[] = [];
  /** the run is being settled: a hand-back comes too late */
  private settling = false;
  /** handBack() stopped the run: it is not ended, its lease is released */
  private handedBack = false;
  /** what the engine threw, if it did */
  internal: unknown = null;
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
    this.emit = opts.onProgress ?? (() => {});
    this.runId = opts.runId ?? newRecordId();
    this.ids = opts.only ? [opts.only.node] : Object.keys(flow.nodes);
    this.given = new Set(Object.keys(opts.only?.outputs ?? {}));
    for (const id of this.given) this.outputs[id] = { output: opts.only!.outputs[id] };
    this.onFailTargets = new Set(this.ids.map((id) => flow.nodes[id]!.onFail).filter((x): x is string => !!x));
    const outer = opts.signal;
    if (outer) {
      const fromOuter = () =>
        this.stop(outer.reason instanceof RunInterruptedError ? outer.reason : new RunInterruptedError(outer.reason instanceof Error ? outer.reason.message : 'stopped'));
      if (outer.aborted) fromOuter();
      else outer.addEventListener('abort', fromOuter, { once: true });
    }
    const stored = opts.resume?.facts;
    // a replay's or a limits probe's record says so from its first fact (a taken-over run's kind is read with its row)
    const link: Partial<RunLink> = opts.runKind ? { kind: opts.runKind.kind, replayOf: opts.runKind.replayOf ?? null, replayNode: opts.runKind.replayNode ?? null } : {};
    this.facts = stored
      ? {
          ...stored,
          // a take-over keeps who started the run and the project it was recorded under
          startedBy: stored.startedBy ?? null,
          projectHash: stored.projectHash ?? null,
          snapshotId: stored.snapshotId ?? null,
          ...link,
          id: this.runId,
          status: 'running',
          output: null,
          error: null,
          finishedAt: null,
          nodes: [...stored.nodes],
        }
      : {
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
          startedBy: opts.startedBy ?? null,
          projectHash: opts.projectHash ?? null,
          snapshotId: opts.snapshotId ?? null,
          ...link,
        };
    if (opts.resume) this.restore(opts.resume);
    const caller = this.facts.startedBy ?? null;
    this.admit = db && budgetCaller(caller) ? () => callerLimits(db, caller, 'attempt', { now: this.now() }) : undefined;
  }

  /**
   * A taken-over run's stored nodes (DESIGN: Storage, "Leases"): those that succeeded, failed or
   * were skipped keep their state (outputs feed the templates, on_fail routes are set again as
   * runTurn set them); running or pending ones restart in the turn they were in.
   */
  private restore({ facts, nodeRunIds }: ResumeFrom): void {
    for (const n of facts.nodes) {
      // every stored node has its row (the facts are read from the rows)
      this.nodeRunIds.set(n.id, nodeRunIds.get(n.id)!);
      const unfinished = n.status === 'running' || n.status === 'pending';
      if (!own(this.flow.nodes, n.id)) {
        if (unfinished) this.orphans.push(n);
        continue;
      }
      this.state.set(n.id, n);
      if (unfinished) this.restarting.set(n.id, n);
      else if (n.status === 'succeeded') this.outputs[n.id] = { output: n.output };
    }
    const stored = new Map(facts.nodes.map((n) => [n.id, n]));
    for (const n of facts.nodes) {
      if (n.status !== 'failed' || !own(this.flow.nodes, n.id)) continue;
      // the route was activated unless it had been skipped before the failure (a turn earlier)
      const route = n.error?.code === BUDGET_CODE ? undefined : this.flow.nodes[n.id]!.onFail;
      const r = route ? stored.get(route) : undefined;
      if (route && (!r || r.turn >= n.turn)) this.activated.add(route);
      else this.failedNode ??= n;
    }
  }

  /** Records the run's start; queued before runFlow's first await, so a caller can flush it at once. */
  start(): void {
    const { runId, flow, facts } = this;
    if (this.store) {
      const onLost = (err: Error) => this.stop(err);
      if (this.opts.lease) {
        const nodeRunIds = [...this.restarting.values(), ...this.orphans].map((n) => this.nodeRunIds.get(n.id)!);
        this.store.adoptRun({ id: runId, lease: this.opts.lease, onLost, nodeRunIds });
        this.failOrphans();
      } else {
        this.started = this.store.insertRun({
          id: runId,
          project: this.project.name,
          flow: flow.name,
          input: this.opts.input,
          startedAt: facts.startedAt,
          snapshotId: facts.snapshotId,
          projectHash: facts.projectHash,
          startedBy: facts.startedBy,
          onLost,
          ...(this.opts.runKind && { kind: this.opts.runKind.kind, replayOf: this.opts.runKind.replayOf ?? null, replayNode: this.opts.runKind.replayNode ?? null }),
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

  /** A taken-over run's running nodes that its flow no longer has (a newer snapshot): they fail, with the reason. */
  private failOrphans(): void {
    const at = this.now();
    for (const n of this.orphans) {
      n.status = 'failed';
      n.error = {
        code: INTERRUPTED_NODE_ERROR.code,
        message: `the run was taken over under a project whose flow ${this.flow.name} has no node ${n.id}`,
        hint: INTERRUPTED_NODE_ERROR.hint,
      };
      n.finishedAt = at;
      const usage = sumUsageRounded(n.attempts.map((a) => a.usage));
      this.store?.finishNode({ id: this.nodeRunIds.get(n.id)!, status: 'failed', output: null, error: n.error, usage, finishedAt: at });
    }
  }

  /**
   * Stops the run without ending it (StartedRun.handBack): resolves once `done` has settled — the
   * attempts in flight closed and committed, then the lease released (settleHandedBack).
   */
  async handBack(why: string, done: Promise<RunRecord>): Promise<void> {
    if (!this.settling && !this.stopReason) {
      this.handedBack = true;
      this.stop(new RunHandedBack(why));
    }
    await done.then(
      () => undefined,
      () => undefined,
    );
  }

  /** The turns, then the settling; never throws for an engine failure (the run is failed with it). */
  async loop(): Promise<RunRecord> {
    try {
      const resumed = this.resumedTurn();
      if (resumed.length > 0) await this.runTurn(resumed, this.facts.turns);
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
        this.flow.nodes[id]!.needs.every((d) => this.settled(d) === 'succeeded' || this.given.has(d)),
    );
  }

  /**
   * A taken-over run's unfinished turn (the turn counter goes on from it): the nodes that restart,
   * and those of the same turn whose rows were never written (all their needs done in earlier turns).
   */
  private resumedTurn(): string[] {
    if (this.restarting.size === 0) return [];
    const turn = this.facts.turns;
    const unstarted = new Set(this.nextTurn().filter((id) => !this.onFailTargets.has(id) && this.flow.nodes[id]!.needs.every((d) => this.state.get(d)!.turn < turn)));
    return this.ids.filter((id) => this.restarting.has(id) || unstarted.has(id));
  }

  /** Runs `ready` concurrently as one turn (a new one, or `resumed`: a taken-over run's), then routes each failed node through its on_fail. */
  async runTurn(ready: string[], resumed?: number): Promise<void> {
    // the attempts the last turn's nodes ended on are committed before any node of this one calls a model
    await this.heldCommitted();
    const turn = resumed ?? ++this.facts.turns;
    if (resumed === undefined) this.store?.setRunTurns(this.runId, turn);
    this.emit({ type: 'turn_start', turn, nodes: ready });
    // allSettled: a node that throws must not leave its siblings writing after the run is closed
    const settledTurn = await Promise.allSettled(ready.map((id) => this.runNode(id, turn)));
    const broken = settledTurn.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (broken) throw broken.reason;
    for (const id of ready) {
      const n = this.state.get(id)!;
      if (n.status !== 'failed') continue;
      // a spent budget stops the run: no on_fail route runs (its attempts would be refused too)
      const route = n.error?.code === BUDGET_CODE ? undefined : this.flow.nodes[id]!.onFail;
      // a route outside the nodes this run runs (opts.only) is not followed
      if (route && !this.state.has(route) && this.ids.includes(route)) this.activated.add(route);
      else this.failedNode ??= n;
    }
  }

  /** Skips the nodes never reached, decides the run's status, error and output, and records its end. */
  async settle(): Promise<RunRecord> {
    this.settling = true;
    if (this.handedBack) return this.settleHandedBack();
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
    // one commit: the run's end, the attempts its last nodes ended on, and their nodes' ends
    const ended = this.store?.finishRun({
      id: this.runId,
      status: facts.status,
      output: facts.output,
      error: facts.error,
      turns: facts.turns,
      usage: sumUsageRounded([record.usage]),
      finishedAt: facts.finishedAt,
    });
    const [run, nodes] = await Promise.allSettled([ended, this.heldCommitted()]);
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

  /**
   * A handed-back run: the attempts in flight are closed as interrupted (discarded, their usage
   * kept) and committed with everything queued, then the lease is released. The run and its running
   * nodes stay `running`: the record is the run as this process leaves it.
   */
  private async settleHandedBack(): Promise<RunRecord> {
    const { message } = stopWords(this.stopReason!);
    const writes: Promise<void>[] = [];
    for (const n of this.facts.nodes.filter((x) => x.status === 'running')) {
      const cut = this.recorders.get(n.id)?.interrupt(message);
      if (!cut) continue;
      n.attempts.push(...cut.attempts);
      writes.push(cut.written);
    }
    this.recorders.clear();
    writes.push(...this.takeHeld());
    await Promise.allSettled(writes);
    // releaseRun commits what is still queued before it releases: the next owner finds it all
    await this.store?.releaseRun(this.runId, this.now()).catch(() => false);
    return buildRunRecord(this.facts);
  }

  /** A stopped run: its facts closed (closeStopped) and committed; throws when it could not be recorded. */
  private async settleStopped(reason: Error): Promise<RunRecord> {
    const { record, written } = this.closeStopped(reason);
    const recorded = await written;
    this.emit({ type: 'run_end', record });
    if (reason instanceof StorageError || reason instanceof LeaseLostError) throw new RunNotRecordedError(reason, record, recorded && reason instanceof StorageError);
    // stopped, and found out while closing that another process had taken the run over
    if (this.closingLost) throw new RunNotRecordedError(this.closingLost, record, false);
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
          id: this.runId,
          status: facts.status,
          output: null,
          error: facts.error,
          turns: facts.turns,
          usage: sumUsageRounded([record.usage]),
          finishedAt: at,
        }),
      );
    }
    writes.push(...this.takeHeld());
    const written = Promise.all(writes).then(
      () => true,
      (err: unknown) => {
        if (err instanceof LeaseLostError) this.closingLost = err;
        return false;
      },
    );
    this.closing = { record, written };
    return this.closing;
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
      const n = this.state.get(id)!;
      Object.assign(n, { status: 'running', output: null, error: null, finishedAt: null });
      delete this.outputs[id];
      if (this.failedNode === n) this.failedNode = null;
    }
    throw failed.reason;
  }

  private settled(id: string) {
    return this.state.get(id)?.status;
  }

  /** A node that needs a failed or skipped node is skipped; repeated until nothing changes. */
  private skipBlocked(): void {
    for (let changed = true; changed;) {
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
      id,
      agent: node.agent,
      turn,
      status: 'skipped',
      output: null,
      error: null,
      policy,
      attempts: [],
      startedAt: this.now(),
      finishedAt: this.now(),
    };
    this.state.set(id, n);
    this.facts.nodes.push(n);
    this.store?.insertNode({
      id: newRecordId(),
      runId: this.runId,
      nodeId: id,
      agent: node.agent,
      turn,
      ord: this.ids.indexOf(id),
      status: 'skipped',
      policy,
      startedAt: n.startedAt,
    });
    this.emit({ type: 'node_skipped', node: id, reason });
  }

  /** Runs one node through the engine, recording its facts as they happen. */
  private async runNode(id: string, turn: number): Promise<void> {
    // the names the engine call below reads
    const { opts, providers, sharedPauses, emit, runId } = this;
    const node = this.flow.nodes[id]!;
    const agent = this.project.agents[node.agent]!;
    const policy = agentPolicy(agent);
    // a node of a taken-over run restarts on its own row, after its stored attempts
    const restarted = this.restarting.get(id);
    this.restarting.delete(id);
    const earlier = restarted ? [...restarted.attempts] : [];
    const nodeRunId = restarted ? this.nodeRunIds.get(id)! : newRecordId();
    this.nodeRunIds.set(id, nodeRunId);
    const n: NodeFacts = restarted ?? {
      id,
      agent: agent.name,
      turn,
      status: 'running',
      output: null,
      error: null,
      policy,
      attempts: [],
      startedAt: this.now(),
      finishedAt: null,
    };
    n.policy = policy;
    if (!restarted) {
      this.state.set(id, n);
      this.facts.nodes.push(n);
      this.store?.insertNode({ id: nodeRunId, runId, nodeId: id, agent: agent.name, turn, ord: this.ids.indexOf(id), status: 'running', policy, startedAt: n.startedAt });
    }
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
        ...(restarted && { prior: priorAnswers(earlier) }),
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
        admit: this.admit,
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
      },
    );
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
    this.store?.finishNode({ id: nodeRunId, status: result.status, output: n.output, error: result.error, usage, finishedAt: n.finishedAt });
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
      this.store?.finishNode({
        id: this.nodeRunIds.get(n.id)!,
        status: 'failed',
        output: null,
        error: n.error,
        usage: sumUsageRounded(n.attempts.map((a) => a.usage)),
        finishedAt: at,
      });
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
