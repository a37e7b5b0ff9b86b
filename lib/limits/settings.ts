// The call settings a measurement is taken under, and their key (DESIGN: Structural limits,
// "Storage"): one model_limits row per model, dimension, settings key and UTC date, so a run with the
// same settings on the same day resumes the stored levels and a run with others starts apart.
import { createHash } from 'node:crypto';
import type { LimitSettings } from '@/lib/shared/limits-types';

/** bumped whenever lib/limits/tasks.ts changes what a level asks: old levels are then not resumed */
export const TASKS_VERSION = 1;

export { LIMIT_DEFAULTS } from '@/lib/shared/limits-types';

export function limitSettings(o: { trials: number; threshold: number; maxTokens: number; temperature?: number }): LimitSettings {
  return {
    trials: o.trials,
    threshold: o.threshold,
    maxTokens: o.maxTokens,
    ...(o.temperature !== undefined && { temperature: o.temperature }),
    strict: false,
    tasks: TASKS_VERSION,
  };
}

/** sha256 of the settings with sorted keys, 16 hex digits */
export function settingsKey(s: LimitSettings): string {
  const canonical = JSON.stringify(Object.fromEntries(Object.entries(s).sort(([a], [b]) => (a < b ? -1 : 1))));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

export { utcDate } from '@/lib/shared/utc-day';
