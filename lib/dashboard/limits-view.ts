// A model's measured structural limits as the dashboard shows them (DESIGN: The dashboard,
// "Structural limits"): per dimension the last level that held and the first that failed, and
// each measured level's first-try and after-repair valid rates with Wilson's 95% interval. Rates
// are out of the answered trials: a truncated answer measures max_tokens and a provider error the
// provider, not the model's grasp of the shape; both are counted apart. Pure; built on the server, read by client
// components (they import only the types).
import { answeredTrials, levelHeld, STALE_RUNNING_MS, type LimitDimension, type ModelLimit } from '@/lib/shared/limits-types';
import { wilson, type Figure } from '@/lib/shared/wilson';

export type { Figure };

export interface LevelView {
  level: number;
  trials: number;
  truncated: number;
  /** answers that count: trials minus the truncated ones and the provider's errors */
  judged: number;
  firstTry: Figure;
  afterRepair: Figure;
  /** enum only: first-try valid answers that picked the right value, out of those valid answers */
  correct: Figure | null;
  held: boolean;
}

/** a stored measurement as the page shows it: its levels judged, smallest first */
export interface DimensionView extends Pick<
  ModelLimit,
  'dimension' | 'status' | 'lastHeld' | 'firstFailed' | 'threshold' | 'trials' | 'calls' | 'costUsd' | 'measuredOn' | 'updatedAt' | 'runId'
> {
  levels: LevelView[];
}

export interface ModelLimitsView {
  model: string;
  /** the three dimensions in order; a dimension never measured is absent */
  dimensions: DimensionView[];
}

const ORDER: Record<LimitDimension, number> = { depth: 0, list: 1, enum: 2 };

/** One level's figures, judged as the probe judges them (levelHeld, lib/shared/limits-types.ts). */
export function levelView(l: ModelLimit['levels'][number], threshold: number): LevelView {
  const judged = Math.max(0, answeredTrials(l));
  return {
    level: l.level,
    trials: l.trials,
    truncated: l.truncated,
    judged,
    firstTry: wilson(l.firstTryValid, judged),
    afterRepair: wilson(l.afterRepairValid, judged),
    correct: l.correct === undefined ? null : wilson(l.correct, l.firstTryValid),
    held: levelHeld(l, threshold) === true,
  };
}

/** The views of `models` (in that order; a model never measured has no dimensions) from the newest measurements. */
export function modelLimitsViews(models: readonly string[], limits: readonly ModelLimit[], now = Date.now()): ModelLimitsView[] {
  return models.map((model) => ({
    model,
    dimensions: limits
      .filter((m) => m.model === model)
      .sort((a, b) => ORDER[a.dimension] - ORDER[b.dimension])
      .map((m) => ({
        dimension: m.dimension,
        status: m.status === 'running' && now - m.updatedAt > STALE_RUNNING_MS ? 'partial' : m.status,
        lastHeld: m.lastHeld,
        firstFailed: m.firstFailed,
        threshold: m.threshold,
        trials: m.trials,
        levels: [...m.levels].sort((a, b) => a.level - b.level).map((l) => levelView(l, m.threshold)),
        calls: m.calls,
        costUsd: m.costUsd,
        measuredOn: m.measuredOn,
        updatedAt: m.updatedAt,
        runId: m.runId,
      })),
  }));
}

/** A limits probe the dashboard's process started (lib/server/limits-probe.ts), as GET /api/limits shows it. */
export interface ProbeView {
  id: string;
  model: string;
  dimensions: LimitDimension[];
  startedAt: number;
  startedBy: string | null;
  /** the limits run (runs.kind = 'limits'), once it exists */
  runId: string | null;
  maxCalls: number;
  maxCostUsd: number;
  calls: number;
  costUsd: number;
  /** what is being measured now (trials of the level ended, of `trials`); null before the first call and once done */
  current: { dimension: LimitDimension; level: number; done: number; trials: number } | null;
  done: boolean;
  /** why it stopped before finishing (a budget, an error), when it did */
  stopped: string | null;
}

/** GET /api/limits?model=…: the newest measurements of the models asked for, and the probes of them this process runs. */
export interface LimitsResponse {
  models: ModelLimitsView[];
  probes: ProbeView[];
}

/** A W_SCHEMA_LIMIT warning of a node the agent runs, as the agent page lists it. */
export interface LimitWarningView {
  flow: string;
  node: string;
  file: string;
  line: number;
  col: number;
  message: string;
  hint: string;
}
