// Start a limits probe (DESIGN: Structural limits): which model, which dimensions, and the budgets
// of the probe — the "Measure limits" form (lib/actions/start-limits.ts) and `aqven limits MODEL
// --dimension --trials --max-calls --max-cost --threshold --max-tokens` (lib/cli/limits.ts) parse
// the same values with this one schema. The bounds are the form's: a typo of a few zeros should not
// be a blank cheque, whichever door it is typed at.
import { z } from 'zod';
import { LIMIT_DEFAULTS, LIMIT_DIMENSIONS, type LimitDimension } from '@/lib/shared/limits-types';
import { FIELD } from './refusal';
import { usdAmount } from './usd-amount';

export const MAX_PROBE_TRIALS = 50;
/** a trial may take two calls (its answer and one repair): fewer could not measure anything */
export const MIN_PROBE_CALLS = 2;
export const MAX_PROBE_CALLS = 5000;
export const MAX_PROBE_COST_USD = 100;
export const MIN_PROBE_MAX_TOKENS = 16;
export const MAX_PROBE_MAX_TOKENS = 1_000_000;
/** what to do about a limits run that stopped before it ended (its process stopped, or it was stopped) */
export const PROBE_RESUME_HINT = 'Run aqven limits again with the same settings today: it resumes the levels measured.';
/** a model string's length (the form's field and the command's argument alike) */
export const MAX_MODEL_CHARS = 300;

/** A whole number from `min` to `max`, written in digits (no "1e3", no "4.0"). */
function whole(min: number, max: number) {
  const words = (raw: string) => `${FIELD} must be a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}, got "${raw}"`;
  return z.string({ error: words('') }).transform((raw, ctx) => {
    const n = Number(raw);
    if (/^\s*\d+\s*$/.test(raw) && Number.isSafeInteger(n) && n >= min && n <= max) return n;
    ctx.addIssue({ code: 'custom', message: words(raw) });
    return z.NEVER;
  });
}

const rate = z.string().transform((raw, ctx) => {
  const n = Number(raw);
  if (raw.trim() !== '' && Number.isFinite(n) && n > 0 && n <= 1) return n;
  ctx.addIssue({ code: 'custom', message: `${FIELD} must be a rate above 0 and at most 1, e.g. ${LIMIT_DEFAULTS.threshold}, got "${raw}"` });
  return z.NEVER;
});

const DIMENSION_WORDS = `${FIELD} must be depth, list, enum or all`;

export const startLimitsProbeSchema = z
  .object({
    model: z
      .string({ error: `${FIELD} is missing: name a model as provider:model-id` })
      .trim()
      .min(1, `${FIELD} is empty: name a model as provider:model-id`)
      .max(MAX_MODEL_CHARS, `${FIELD} is at most ${MAX_MODEL_CHARS} characters`),
    dimension: z.string({ error: DIMENSION_WORDS }).refine((d) => d === 'all' || (LIMIT_DIMENSIONS as readonly string[]).includes(d), {
      error: (i) => `${DIMENSION_WORDS}, got "${String(i.input)}"`,
    }),
    trials: whole(1, MAX_PROBE_TRIALS),
    maxCalls: whole(MIN_PROBE_CALLS, MAX_PROBE_CALLS),
    maxCost: usdAmount(MAX_PROBE_COST_USD),
    // fixed by the form; the command may set them
    threshold: rate.optional(),
    maxTokens: whole(MIN_PROBE_MAX_TOKENS, MAX_PROBE_MAX_TOKENS).optional(),
  })
  .transform((v) => ({
    model: v.model,
    dimensions: v.dimension === 'all' ? [...LIMIT_DIMENSIONS] : [v.dimension as LimitDimension],
    trials: v.trials,
    maxCalls: v.maxCalls,
    maxCostUsd: v.maxCost,
    threshold: v.threshold ?? LIMIT_DEFAULTS.threshold,
    maxTokens: v.maxTokens ?? LIMIT_DEFAULTS.maxTokens,
  }));

/** What a door hands the contract: each value as typed (a form field, a flag); `dimension` is depth, list, enum or all. */
export type StartLimitsProbeInput = z.input<typeof startLimitsProbeSchema>;
/** The probe's settings, parsed. */
export type StartLimitsProbe = z.output<typeof startLimitsProbeSchema>;
export type StartLimitsProbeField = keyof StartLimitsProbeInput;
export const START_LIMITS_PROBE_FIELDS: readonly StartLimitsProbeField[] = ['model', 'dimension', 'trials', 'maxCalls', 'maxCost', 'threshold', 'maxTokens'];
