// The shapes of a model's measured structural limits (DESIGN: Structural limits, "Storage"), shared
// by db/limits-queries.ts, the probe (lib/limits/) and the pages, which must not import db/.

export type LimitDimension = 'depth' | 'list' | 'enum';
export const LIMIT_DIMENSIONS: readonly LimitDimension[] = ['depth', 'list', 'enum'];

export type LimitStatus = 'running' | 'complete' | 'partial';

/**
 * A row still `running` but not written for this long is read as partial: its process died (a
 * level is written as soon as it is measured). The pages show it so, and the next probe with its
 * settings that day takes it over and resumes it; a row written more recently belongs to a probe
 * still running, which another probe of the same key may not write into (db/limits-queries.ts).
 */
export const STALE_RUNNING_MS = 10 * 60_000;

/** The safe defaults of a limits run, printed before it starts (CLI) and proposed by the dashboard's form. */
export const LIMIT_DEFAULTS = {
  trials: 5,
  threshold: 0.9,
  maxCalls: 300,
  maxCostUsd: 1,
  maxTokens: 8192,
} as const;

/** What one level of one dimension gave: counts out of `trials` answered trials. */
export interface LimitLevel {
  level: number;
  /** trials sent at this level (a trial is one task: its first answer and at most one repair) */
  trials: number;
  /** answers valid against the task's schema as they first came back */
  firstTryValid: number;
  /** valid after at most one repair re-prompt (includes the first-try valid ones) */
  afterRepairValid: number;
  /** trials whose answer was cut off by max_tokens: counted apart, out of the rates' denominator */
  truncated: number;
  /** trials that ended in a provider error or a refusal before any answer to judge: out of the denominator too */
  errors?: number;
  /** enum only: valid answers that also picked the right value */
  correct?: number;
  /** model calls spent on this level (first answers, repairs, and transport retries are not counted twice) */
  calls: number;
}

/** The call settings a measurement was taken under: a different value is a different measurement. */
export interface LimitSettings {
  trials: number;
  threshold: number;
  maxTokens: number;
  temperature?: number;
  strict: false;
  /** bumped when the task generators change, so old and new tasks are never mixed in one row */
  tasks: number;
}

export interface ModelLimit {
  model: string;
  dimension: LimitDimension;
  status: LimitStatus;
  /** the last level whose first-try valid rate reached the threshold; null: none measured held */
  lastHeld: number | null;
  /** the first level below the threshold; null: none failed within the search */
  firstFailed: number | null;
  threshold: number;
  trials: number;
  levels: LimitLevel[];
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** YYYY-MM-DD, UTC */
  measuredOn: string;
  startedAt: number;
  updatedAt: number;
  /** the limits run (runs.kind = 'limits') that last wrote it; null once purged */
  runId: string | null;
  settings: LimitSettings;
}

/**
 * The first words of every probe task's prompt: the simulator plays a model's declared limits on
 * these requests alone, chaos's `invalid` fault included (lib/sim/limits.ts).
 */
export const LIMITS_PROBE_MARK = 'Structural limits probe,';

/**
 * The sentence of an enum probe task naming the value to pick by a fragment of it: the probe writes
 * it, and the simulator reads it to answer like a model that found the value (lib/sim/limits.ts).
 */
export const ENUM_TASK_PHRASE = 'Set "choice" to the one allowed value that contains the fragment';

/** A level held when its first-try valid rate, over the trials that were answered, reaches the threshold. */
export function levelHeld(l: LimitLevel, threshold: number): boolean | null {
  const answered = answeredTrials(l);
  if (answered === 0) return null;
  return l.firstTryValid / answered >= threshold - 1e-12;
}

/** trials that got an answer to judge: truncated ones measure max_tokens, errors the provider, not the model's grasp of the shape */
export function answeredTrials(l: LimitLevel): number {
  return l.trials - l.truncated - (l.errors ?? 0);
}
