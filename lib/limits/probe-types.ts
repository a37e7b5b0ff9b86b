// The limits probe's shapes (probe.ts runs it): what it is given, what it says while it runs, what it reports.
import type { Db } from '@/db/types';
import type { Clock, ResolvedProvider } from '@/lib/engine/types';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { Project } from '@/lib/project';
import type { LimitDimension, LimitLevel, LimitSettings, LimitStatus } from '@/lib/shared/limits-types';

/** The run's `flow` column and the nodes' `agent`: a limits run runs no flow of the project. */
export const LIMITS_FLOW = 'limits';
export const LIMITS_AGENT = '(limits)';

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

/** A started probe: its run row committed; `done` is the rest. */
export interface StartedProbe {
  runId: string;
  done: Promise<LimitsReport>;
}
