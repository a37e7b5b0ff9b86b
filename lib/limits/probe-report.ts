// What the limits probe (probe.ts) says: a level's rates, a dimension it never reached, why it stopped,
// and the run row's end (status and error).
import { explainHint } from '@/lib/shared/run-codes';
import type { RunError } from '@/db/types';
import { PROBE_RESUME_HINT } from '@/lib/contracts/limits-probe';
import { wilson } from '@/lib/shared/wilson';
import { answeredTrials, levelHeld, type LimitDimension, type LimitLevel } from '@/lib/shared/limits-types';
import { BUDGET_CODE } from '@/lib/shared/spend-budget';
import { CALLS_PER_TRIAL, type SpendStop, type Trial } from './probe-trial';
import type { DimensionReport, LimitLevelReport, LimitsProbeOptions, RateFigure, StopReason } from './probe-types';

/** a model_limits row's totals */
export interface Totals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
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

/** A measured level: its trials' ends counted. */
export function tallyLevel(dimension: LimitDimension, level: number, trials: number, spent: Trial[]): LimitLevel {
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

/** a dimension the run never reached: nothing stored, nothing measured */
export function untouchedDimension(dimension: LimitDimension, stoppedBy: StopReason | null): DimensionReport {
  return {
    dimension,
    status: 'partial',
    lastHeld: null,
    firstFailed: null,
    levels: [],
    resumed: 0,
    stoppedBy,
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
  };
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function stopMessage(reason: StopReason, o: LimitsProbeOptions, why: unknown): string {
  if (reason === 'max_calls') return `stopped at the call budget (--max-calls ${o.maxCalls}): one more trial could take ${CALLS_PER_TRIAL} calls`;
  if (reason === 'max_cost') return `stopped at the cost budget (--max-cost ${o.maxCostUsd})`;
  return why instanceof Error ? why.message : 'stopped';
}

/** The limits run row's end: interrupted, failed (a failure, or the caller's spend budget) or succeeded. */
export function runEnding(
  stopped: { reason: StopReason; message: string } | null,
  failure: unknown,
  spend: SpendStop | null,
): { status: 'interrupted' | 'failed' | 'succeeded'; error: RunError | null } {
  const interrupted = stopped?.reason === 'interrupted';
  const error: RunError | null = failure
    ? {
        code: 'limits_error',
        node: null,
        message: stopped!.message,
        hint: explainHint('limits_error', 'Fix the cause named above, then run aqven limits again: it resumes the levels measured today.'),
      }
    : spend
      ? { code: BUDGET_CODE, node: null, message: spend.refusal.message, hint: explainHint(BUDGET_CODE, spend.refusal.hint) }
      : null;
  return {
    status: interrupted ? 'interrupted' : error ? 'failed' : 'succeeded',
    error: interrupted
      ? {
          code: 'interrupted',
          node: null,
          message: `the limits run was ${stopped!.message}`,
          hint: explainHint('interrupted', PROBE_RESUME_HINT),
        }
      : error,
  };
}
