// `aqven limits` and the dashboard's limits run (DESIGN: CLI, `aqven limits`): probes one model's
// structural limits — nesting depth, list length, enum size — level by level. Every trial is one
// node call through the engine (transport retry, rate gate, redaction, usage and cost), recorded
// like any node of a run of kind `limits` (nodes `depth-8-t1`, …), with `strict: false` and one
// repair (output.retries = 1): the first answer gives the first-try rate, the node's end the rate
// after one repair. The search (search.ts) picks the levels; each measured level is written to
// model_limits at once, so a stop (budget, Ctrl-C, an error) keeps what was measured and a later
// run with the same settings on the same UTC day resumes it.
// The trials' shapes live in probe-types.ts, the model check in probe-model.ts, one trial in
// probe-trial.ts, the report's figures and the run's end in probe-report.ts; this file plans and runs.
import { openModelLimit, saveModelLimit, type StoredModelLimit } from '@/db/limits-queries';
import { runStore, type RunStore } from '@/db/run-store';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { systemClock } from '@/lib/engine/clock';
import type { AttemptRefusal, Clock, NodePolicy, SharedPauses, UsageTotals } from '@/lib/engine/types';
import { roundCost, sumUsageRounded } from '@/lib/engine/usage';
import { trackRun } from '@/lib/flow/active-runs';
import { LEVEL_RANGE, limitTask, type LimitTask } from './tasks';
import { searchState } from './search';
import type { LimitDimension, LimitLevel, LimitSettings, LimitStatus } from '@/lib/shared/limits-types';
import { newRecordId } from '@/lib/shared/record-id';
import { budgetCaller } from '@/lib/shared/spend-budget';
import { limitSettings, settingsKey, utcDate } from './settings';
import { checkModel } from './probe-model';
import { CALLS_PER_TRIAL, runTrial, SpendStop, type Trial } from './probe-trial';
import { errorText, levelReport, runEnding, stopMessage, tallyLevel, untouchedDimension, type Totals } from './probe-report';
import {
  LIMITS_FLOW,
  type DimensionReport,
  type LimitsProbeOptions,
  type LimitsProgress,
  type LimitsReport,
  type ProbeSession,
  type StartedProbe,
  type StopReason,
} from './probe-types';

export { agentModels, checkModel, UnknownModelError } from './probe-model';
export { levelReport } from './probe-report';
export * from './probe-types';

/** trials of one level sent at once */
const CONCURRENCY = 4;

class BudgetStop extends Error {
  constructor(readonly reason: 'max_calls' | 'max_cost') {
    super(reason);
  }
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
    const usage = sumUsageRounded(this.usage);
    const { status, error } = runEnding(this.stopped, this.failure, this.spendStop);
    await this.store.finishRun({
      id: this.runId,
      status,
      output: { model: this.o.model, dimensions: reports.map((r) => ({ dimension: r.dimension, status: r.status, lastHeld: r.lastHeld, firstFailed: r.firstFailed })) },
      error,
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
    return untouchedDimension(dimension, this.stopped?.reason ?? null);
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
    return tallyLevel(dimension, level, trials, spent);
  }

  /** One trial (probe-trial.ts): the error of a trial that ended in one is kept for an undecided level. */
  private async trial(task: LimitTask, trial: number): Promise<Trial> {
    const room = {
      store: this.store,
      runId: this.runId,
      turn: this.turn,
      clock: this.clock,
      policy: this.policy,
      session: this.s,
      options: this.o,
      sharedPauses: this.sharedPauses,
      signal: this.ac.signal,
      admit: this.admit,
      count: (calls: number, usage: UsageTotals) => this.count(calls, usage),
    };
    const end = await runTrial(room, task, trial);
    if (end.trial.kind === 'error') this.lastError = end.error;
    return end.trial;
  }
}
