// `aqven limits` and the dashboard's limits run (DESIGN: CLI, `aqven limits`): probes one model's
// structural limits — nesting depth, list length, enum size — level by level. Every trial is one
// node call through the engine (transport retry, rate gate, redaction, usage and cost), recorded
// like any node of a run of kind `limits` (nodes `depth-8-t1`, …), with `strict: false` and one
// repair (output.retries = 1): the first answer gives the first-try rate, the node's end the rate
// after one repair. The search (search.ts) picks the levels; each measured level is written to
// model_limits at once, so a stop (budget, Ctrl-C, an error) keeps what was measured and a later
// run with the same settings on the same UTC day resumes it.
import { openModelLimit, saveModelLimit, type StoredModelLimit } from '@/db/limits-queries';
import { runStore, type RunStore } from '@/db/run-store';
import { callerLimits } from '@/lib/contracts/caller-limits';
import type { Db, RunError } from '@/db/types';
import { wilson } from '@/lib/shared/wilson';
import { callNode } from '@/lib/engine/call-node';
import type { RateGate } from '@/lib/engine/rate-gate';
import { systemClock } from '@/lib/engine/clock';
import { parseModelString } from '@/lib/engine/model-string';
import type { AttemptRefusal, Clock, NodePolicy, NodeResult, ResolvedProvider, SharedPauses, UsageTotals } from '@/lib/engine/types';
import { roundCost, sumUsageRounded } from '@/lib/engine/usage';
import { NodeRecorder } from '@/lib/flow/recorder';
import { trackRun } from '@/lib/flow/active-runs';
import { agentPolicy, type Project } from '@/lib/project';
import { builtinAdapters } from '@/lib/providers';
import { LEVEL_RANGE, answerCorrect, limitTask, maxTokensFor, type LimitTask } from './tasks';
import { searchState } from './search';
import { answeredTrials, levelHeld, type LimitDimension, type LimitLevel, type LimitSettings, type LimitStatus } from '@/lib/shared/limits-types';
import { newRecordId } from '@/lib/shared/record-id';
import { BUDGET_CODE, budgetCaller } from '@/lib/shared/spend-budget';
import { limitSettings, settingsKey, utcDate } from './settings';

/** The run's `flow` column and the nodes' `agent`: a limits run runs no flow of the project. */
export const LIMITS_FLOW = 'limits';
export const LIMITS_AGENT = '(limits)';
/** trials of one level sent at once */
const CONCURRENCY = 4;
/** answers one trial may take: the first and one repair */
const CALLS_PER_TRIAL = 2;

/** What the probe needs of a session (lib/flow/session.ts's Session has it all). */
export interface ProbeSession {
  project: Project;
  db: Db;
  providers: Record<string, ResolvedProvider>;
  env: Record<string, string | undefined>;
  snapshotId?: number | null;
  projectHash?: string;
  /** the providers are the simulator's */
  simulated?: unknown;
}

export interface LimitsProbeOptions {
  model: string;
  dimensions: LimitDimension[];
  trials: number;
  threshold: number;
  maxCalls: number;
  maxCostUsd: number;
  /** max_tokens of every trial, at least (a level whose answer may need more gets more: maxTokensFor) */
  maxTokens: number;
  temperature?: number;
  /** who starts it: a user's name or `cli:<login>` */
  startedBy: string | null;
  signal?: AbortSignal;
  onProgress?: (p: LimitsProgress) => void;
  clock?: Clock;
  /** the rate-limit gate (default: the process's) */
  gate?: RateGate;
}

export interface LimitsProgress {
  dimension: LimitDimension;
  level: number;
  /** trials of this level ended so far, of `trials` */
  done: number;
  trials: number;
  /** the whole run so far */
  calls: number;
  costUsd: number;
  maxCalls: number;
  maxCostUsd: number;
  /** the level just measured, when one was */
  measured?: LimitLevelReport;
}

export interface RateFigure {
  value: number;
  /** Wilson's 95% interval */
  low: number;
  high: number;
}

export interface LimitLevelReport extends LimitLevel {
  /** over the answered trials (trials - truncated - errors) */
  firstTry: RateFigure;
  afterRepair: RateFigure;
  /** enum: right value over the first-try valid answers */
  correctRate?: RateFigure;
  held: boolean | null;
}

/** `spend_budget`: the caller's daily spend budget is spent (E_BUDGET; DESIGN: The dashboard, "Spend budgets") */
export type StopReason = 'max_calls' | 'max_cost' | 'spend_budget' | 'interrupted' | 'error' | 'undecided';

export interface DimensionReport {
  dimension: LimitDimension;
  status: LimitStatus;
  lastHeld: number | null;
  firstFailed: number | null;
  /** every level of the measurement, this run's and a resumed run's, in the order measured */
  levels: LimitLevelReport[];
  /** levels found stored (resumed) */
  resumed: number;
  /** why it stopped before the search ended */
  stoppedBy: StopReason | null;
  /** the row's totals (earlier runs of the same day and settings included) */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface LimitsReport {
  runId: string;
  model: string;
  measuredOn: string;
  settings: LimitSettings;
  dimensions: DimensionReport[];
  /** this run's calls, tokens and cost */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  stopped: { reason: StopReason; message: string } | null;
}

/** The model is not one the project can call: named with the models its agents use. */
export class UnknownModelError extends Error {
  constructor(
    readonly model: string,
    readonly known: string[],
  ) {
    super(`${model} is not a model of this project${known.length ? `; its agents use ${known.join(', ')}` : ''}`);
    this.name = 'UnknownModelError';
  }
}

/** Every model the project's agents name (model, then fallbacks), in agent order, once each. */
export function agentModels(project: Project): string[] {
  return [...new Set(Object.values(project.agents).flatMap((a) => agentPolicy(a).chain))];
}

/** `model` if the project can call it: an agent uses it, or its provider's catalogue lists it; else UnknownModelError. */
export function checkModel(project: Project, model: string): void {
  const known = agentModels(project);
  if (known.includes(model)) return;
  const ref = parseModelString(model);
  const provider = ref && Object.hasOwn(project.providers, ref.provider) ? project.providers[ref.provider] : undefined;
  if (provider && Object.hasOwn(provider.models, ref!.modelId)) return;
  throw new UnknownModelError(model, known);
}

function rate(k: number, n: number): RateFigure {
  const w = wilson(k, n);
  return { value: w.value, low: w.low, high: w.high };
}

export function levelReport(l: LimitLevel, threshold: number): LimitLevelReport {
  const n = answeredTrials(l);
  return {
    ...l,
    firstTry: rate(l.firstTryValid, n),
    afterRepair: rate(l.afterRepairValid, n),
    ...(l.correct !== undefined && { correctRate: rate(l.correct, l.firstTryValid) }),
    held: levelHeld(l, threshold),
  };
}

/** What one trial came to. */
interface Trial {
  kind: 'answered' | 'truncated' | 'error';
  firstTryValid: boolean;
  afterRepairValid: boolean;
  correct: boolean;
  calls: number;
  usage: UsageTotals;
}

function judgeTrial(task: LimitTask, r: NodeResult): Trial {
  const first = r.attempts[0];
  const base = { calls: r.attempts.length, usage: r.usage, firstTryValid: false, afterRepairValid: false, correct: false };
  if (!first || first.outcome === 'error' || first.outcome === 'refusal') return { ...base, kind: 'error' };
  if (first.outcome === 'truncated') return { ...base, kind: 'truncated' };
  const firstTryValid = first.error === null;
  return {
    ...base,
    kind: 'answered',
    firstTryValid,
    afterRepairValid: r.status === 'succeeded',
    correct: firstTryValid && answerCorrect(task, r.output),
  };
}

class BudgetStop extends Error {
  constructor(readonly reason: 'max_calls' | 'max_cost') {
    super(reason);
  }
}

/** A trial's attempt was refused: the caller's daily spend budget is spent (the trial's node failed with E_BUDGET). */
class SpendStop extends Error {
  constructor(readonly refusal: { message: string; hint: string }) {
    super(refusal.message);
  }
}

/** A started probe: its run row committed; `done` is the rest. */
export interface StartedProbe {
  runId: string;
  done: Promise<LimitsReport>;
}

/** Checks the options, records the run (kind `limits`) and starts the search; resolves once the run row is committed. */
export async function beginLimitsProbe(s: ProbeSession, o: LimitsProbeOptions): Promise<StartedProbe> {
  checkModel(s.project, o.model);
  const probe = new Probe(s, o);
  await probe.start();
  const done = probe.run();
  trackRun({ runId: probe.runId, interrupt: (why) => probe.abort(why), interruptNow: (why) => probe.abort(why), done });
  return { runId: probe.runId, done };
}

/** beginLimitsProbe, then its end. */
export async function runLimitsProbe(s: ProbeSession, o: LimitsProbeOptions): Promise<LimitsReport> {
  return (await beginLimitsProbe(s, o)).done;
}

class Probe {
  readonly runId = newRecordId();
  private readonly store: RunStore;
  private readonly clock: Clock;
  private readonly settings: LimitSettings;
  private readonly key: string;
  private readonly measuredOn: string;
  private readonly ac = new AbortController();
  private readonly policy: NodePolicy;
  private readonly sharedPauses: SharedPauses;
  private calls = 0;
  private usage: UsageTotals[] = [];
  private costUsd = 0;
  /** calls and cost held back for trials in flight */
  private reservedCalls = 0;
  private worstTrialCost = 0;
  private turn = 0;
  /** the model_limits row's totals of the dimension being measured: every call of this run lands in them too */
  private dimTotals: Totals = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  private stopped: { reason: StopReason; message: string } | null = null;
  /** the failure text (redacted by the engine) of the last trial that ended in an error: said when a level decides nothing */
  private lastError: string | null = null;
  /** what ended the run with an error (a storage failure, a provider the engine refuses) */
  private failure: unknown = null;
  /** the budget check before each call, when the caller has a budget that can apply (a user, a token) */
  private readonly admit: (() => Promise<AttemptRefusal | null>) | undefined;
  /** the refusal that stopped the run: its caller's budget is spent */
  private spendStop: SpendStop | null = null;

  constructor(
    private readonly s: ProbeSession,
    private readonly o: LimitsProbeOptions,
  ) {
    this.store = runStore(s.db);
    this.clock = o.clock ?? systemClock;
    this.settings = limitSettings(o);
    this.key = settingsKey(this.settings);
    this.measuredOn = utcDate(this.clock.now());
    this.policy = { chain: [o.model], retries: 1, onError: 'fail', onRefusal: 'fail', onTruncated: 'fail', strict: false };
    const store = this.store;
    this.sharedPauses = { get: (m) => store.getPause(m), set: (m, until, reason, origin) => store.setPause(m, until, reason, origin) };
    if (store.clusterPauses) this.sharedPauses.cluster = store.clusterPauses;
    const caller = o.startedBy ?? null;
    this.admit = budgetCaller(caller) ? () => callerLimits(s.db, caller, 'attempt', { now: this.clock.now() }) : undefined;
    const outer = o.signal;
    if (outer) {
      if (outer.aborted) this.abort('stopped');
      else outer.addEventListener('abort', () => this.abort(outer.reason instanceof Error ? outer.reason.message : 'stopped'), { once: true });
    }
  }

  abort(why: string): void {
    if (!this.ac.signal.aborted) this.ac.abort(new Error(why));
  }

  async start(): Promise<void> {
    const o = this.o;
    await this.store.insertRun({
      id: this.runId,
      project: this.s.project.name,
      flow: LIMITS_FLOW,
      input: { model: o.model, dimensions: o.dimensions, trials: o.trials, threshold: o.threshold, maxCalls: o.maxCalls, maxCostUsd: o.maxCostUsd, maxTokens: o.maxTokens },
      startedAt: this.clock.now(),
      snapshotId: this.s.snapshotId ?? null,
      projectHash: this.s.projectHash ?? null,
      startedBy: o.startedBy,
      kind: 'limits',
      onLost: (err) => this.abort(err.message),
    });
  }

  async run(): Promise<LimitsReport> {
    const reports: DimensionReport[] = [];
    for (const dimension of this.o.dimensions) {
      if (this.stopped) {
        reports.push(this.untouched(dimension));
        continue;
      }
      try {
        reports.push(await this.dimension(dimension));
      } catch (err) {
        // the row could not be opened or saved
        this.failure ??= err;
        this.stopped ??= { reason: 'error', message: errorText(err) };
        reports.push(this.untouched(dimension));
      }
    }
    const failure = this.failure;
    const usage = sumUsageRounded(this.usage);
    const interrupted = this.stopped?.reason === 'interrupted';
    const spend = this.spendStop;
    const error: RunError | null = failure
      ? { code: 'limits_error', node: null, message: this.stopped!.message, hint: 'Fix the cause named above, then run aqven limits again: it resumes the levels measured today.' }
      : spend
        ? { code: BUDGET_CODE, node: null, message: spend.refusal.message, hint: spend.refusal.hint }
        : null;
    await this.store.finishRun({
      id: this.runId,
      status: interrupted ? 'interrupted' : error ? 'failed' : 'succeeded',
      output: { model: this.o.model, dimensions: reports.map((r) => ({ dimension: r.dimension, status: r.status, lastHeld: r.lastHeld, firstFailed: r.firstFailed })) },
      error: interrupted
        ? {
            code: 'interrupted',
            node: null,
            message: `the limits run was ${this.stopped!.message}`,
            hint: 'Run aqven limits again with the same settings today: it resumes the levels measured.',
          }
        : error,
      turns: this.turn,
      usage,
      finishedAt: this.clock.now(),
    });
    return {
      runId: this.runId,
      model: this.o.model,
      measuredOn: this.measuredOn,
      settings: this.settings,
      dimensions: reports,
      calls: this.calls,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      costUsd: usage.costUsd,
      stopped: this.stopped,
    };
  }

  /** a dimension the run never reached: nothing stored, nothing measured */
  private untouched(dimension: LimitDimension): DimensionReport {
    return {
      dimension,
      status: 'partial',
      lastHeld: null,
      firstFailed: null,
      levels: [],
      resumed: 0,
      stoppedBy: this.stopped?.reason ?? null,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
    };
  }

  private async dimension(dimension: LimitDimension): Promise<DimensionReport> {
    const { db } = this.s;
    const row: StoredModelLimit = await openModelLimit(
      db,
      { model: this.o.model, dimension, settingsKey: this.key, measuredOn: this.measuredOn },
      { settings: this.settings, runId: this.runId, now: this.clock.now() },
    );
    const resumed = row.levels.length;
    const levels = [...row.levels];
    const totals: Totals = { calls: row.calls, inputTokens: row.inputTokens, outputTokens: row.outputTokens, costUsd: row.costUsd };
    this.dimTotals = totals;
    const range = LEVEL_RANGE[dimension];
    let stoppedBy: StopReason | null = null;
    let undecided: LimitLevel | null = null;
    let state = searchState(levels, this.o.threshold, range);
    const save = (status: LimitStatus) =>
      saveModelLimit(db, row.id, { status, lastHeld: state.lastHeld, firstFailed: state.firstFailed, levels, ...totals, costUsd: roundCost(totals.costUsd) }, this.clock.now());

    while (state.next !== null) {
      const level = state.next;
      this.turn += 1;
      let measured: LimitLevel;
      try {
        measured = await this.level(dimension, level);
      } catch (err) {
        stoppedBy = err instanceof BudgetStop ? err.reason : err instanceof SpendStop ? 'spend_budget' : this.ac.signal.aborted ? 'interrupted' : 'error';
        if (stoppedBy === 'error') this.failure ??= err;
        if (err instanceof SpendStop) this.spendStop ??= err;
        this.stopped ??= {
          reason: stoppedBy,
          message: stoppedBy === 'error' || stoppedBy === 'spend_budget' ? errorText(err) : stopMessage(stoppedBy, this.o, this.ac.signal.reason),
        };
        await save('partial');
        break;
      }
      const report = levelReport(measured, this.o.threshold);
      if (report.held === null) {
        // every trial truncated or failed: the level decides nothing (not stored: a later run measures it again), and going on would say the same
        undecided = measured;
        stoppedBy = 'undecided';
        this.stopped ??= {
          reason: 'undecided',
          message: `no answer at ${dimension} level ${level} could be judged (${measured.truncated} truncated, ${measured.errors ?? 0} errors); ${this.lastError ? `the last error: ${this.lastError}` : 'raise --max-tokens or check the provider'}`,
        };
        await save('partial');
        break;
      }
      levels.push(measured);
      state = searchState(levels, this.o.threshold, range);
      this.progress({ dimension, level, done: measured.trials, trials: this.o.trials, measured: report });
      await save(state.next === null ? 'complete' : 'running');
    }
    const status: LimitStatus = stoppedBy ? 'partial' : 'complete';
    if (!stoppedBy) await save('complete');
    return {
      dimension,
      status,
      lastHeld: state.lastHeld,
      firstFailed: state.firstFailed,
      levels: [...levels, ...(undecided ? [undecided] : [])].map((l) => levelReport(l, this.o.threshold)),
      resumed,
      stoppedBy,
      calls: totals.calls,
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      costUsd: roundCost(totals.costUsd),
    };
  }

  private progress(p: Omit<LimitsProgress, 'calls' | 'costUsd' | 'maxCalls' | 'maxCostUsd'>): void {
    this.o.onProgress?.({ ...p, calls: this.calls, costUsd: roundCost(this.costUsd), maxCalls: this.o.maxCalls, maxCostUsd: this.o.maxCostUsd });
  }

  /** Counts calls and their usage for the run and for the dimension's row. */
  private count(calls: number, usage: UsageTotals): void {
    this.calls += calls;
    this.usage.push(usage);
    this.costUsd += usage.costUsd;
    const t = this.dimTotals;
    t.calls += calls;
    t.inputTokens += usage.inputTokens;
    t.outputTokens += usage.outputTokens;
    t.costUsd += usage.costUsd;
  }

  /** Whether one more trial fits the budget, with the trials in flight counted at their worst. */
  private budgetLeft(inFlight: number): 'max_calls' | 'max_cost' | null {
    if (this.calls + this.reservedCalls + CALLS_PER_TRIAL > this.o.maxCalls) return 'max_calls';
    if (this.costUsd + (inFlight + 1) * this.worstTrialCost > this.o.maxCostUsd || this.costUsd >= this.o.maxCostUsd) return 'max_cost';
    return null;
  }

  /** Measures one level: `trials` trials, a few at a time. Throws when a budget, a stop or an error ends it first (its calls are counted). */
  private async level(dimension: LimitDimension, level: number): Promise<LimitLevel> {
    const trials = this.o.trials;
    const spent: Trial[] = [];
    let nextTrial = 0;
    let inFlight = 0;
    let failure: unknown = null;
    this.lastError = null;
    this.progress({ dimension, level, done: 0, trials });
    const worker = async (): Promise<void> => {
      while (failure === null && nextTrial < trials) {
        if (this.ac.signal.aborted) {
          failure = this.ac.signal.reason;
          return;
        }
        const over = this.budgetLeft(inFlight);
        if (over) {
          failure = new BudgetStop(over);
          return;
        }
        const trial = nextTrial++;
        inFlight += 1;
        this.reservedCalls += CALLS_PER_TRIAL;
        try {
          const t = await this.trial(limitTask(dimension, level, trial), trial);
          spent.push(t);
          this.count(t.calls, t.usage);
          this.worstTrialCost = Math.max(this.worstTrialCost, t.usage.costUsd);
          this.progress({ dimension, level, done: spent.length, trials });
        } catch (err) {
          failure ??= err;
        } finally {
          inFlight -= 1;
          this.reservedCalls -= CALLS_PER_TRIAL;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, trials) }, worker));
    if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure));
    const l: LimitLevel = { level, trials, firstTryValid: 0, afterRepairValid: 0, truncated: 0, errors: 0, calls: 0, ...(dimension === 'enum' && { correct: 0 }) };
    for (const t of spent) {
      l.calls += t.calls;
      if (t.kind === 'truncated') l.truncated += 1;
      else if (t.kind === 'error') l.errors! += 1;
      else {
        if (t.firstTryValid) l.firstTryValid += 1;
        if (t.afterRepairValid) l.afterRepairValid += 1;
        if (t.correct && l.correct !== undefined) l.correct += 1;
      }
    }
    return l;
  }

  /** One trial: a node of the limits run, recorded attempt by attempt like any node. */
  private async trial(task: LimitTask, trial: number): Promise<Trial> {
    const { store, runId } = this;
    const now = () => this.clock.now();
    const nodeRunId = newRecordId();
    const nodeId = `${task.dimension}-${task.level}-t${trial + 1}`;
    store.insertNode({ id: nodeRunId, runId, nodeId, agent: LIMITS_AGENT, turn: this.turn, ord: trial, status: 'running', policy: this.policy, startedAt: now() });
    const recorder = new NodeRecorder(store, runId, nodeRunId, now);
    const settings = { max_tokens: maxTokensFor(task.dimension, task.level, this.o.maxTokens), ...(this.o.temperature !== undefined && { temperature: this.o.temperature }) };
    let result: NodeResult;
    try {
      result = await callNode(
        { nodeId, agent: LIMITS_AGENT, agentFile: 'aqven limits', policy: this.policy, prompt: task.prompt, outputSchema: task.schema, settings },
        {
          providers: this.s.providers,
          adapters: builtinAdapters,
          clock: this.clock,
          gate: this.o.gate,
          env: this.s.env,
          sharedPauses: this.sharedPauses,
          onEvent: recorder.onEvent,
          signal: this.ac.signal,
          admit: this.admit,
        },
      );
    } catch (err) {
      // stopped mid-call: the attempts in flight are closed as interrupted, their usage kept
      const why = this.ac.signal.aborted
        ? `stopped: ${this.ac.signal.reason instanceof Error ? this.ac.signal.reason.message : 'aborted'}`
        : err instanceof Error
          ? err.message
          : String(err);
      const cut = recorder.interrupt(why);
      const usage = sumUsageRounded(cut.attempts.map((a) => a.usage));
      store.finishNode({
        id: nodeRunId,
        status: 'failed',
        output: null,
        error: { code: 'interrupted', message: why, hint: 'Run aqven limits again: it resumes the levels measured today.' },
        usage,
        finishedAt: now(),
      });
      await cut.written;
      this.count(cut.attempts.length, usage);
      throw err;
    }
    store.finishNode({
      id: nodeRunId,
      status: result.status,
      output: result.output ?? null,
      error: result.error,
      usage: sumUsageRounded(result.attempts.map((a) => a.usage)),
      finishedAt: now(),
    });
    // no call of this trial was sent past the spent budget: the probe stops (its calls before are counted)
    if (result.error?.code === BUDGET_CODE) {
      this.count(result.attempts.length, sumUsageRounded(result.attempts.map((a) => a.usage)));
      throw new SpendStop(result.error);
    }
    const judged = judgeTrial(task, result);
    if (judged.kind === 'error') this.lastError = result.attempts[0]?.error?.message ?? result.error?.message ?? null;
    return judged;
  }
}

interface Totals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function stopMessage(reason: StopReason, o: LimitsProbeOptions, why: unknown): string {
  if (reason === 'max_calls') return `stopped at the call budget (--max-calls ${o.maxCalls}): one more trial could take ${CALLS_PER_TRIAL} calls`;
  if (reason === 'max_cost') return `stopped at the cost budget (--max-cost ${o.maxCostUsd})`;
  return why instanceof Error ? why.message : 'stopped';
}
