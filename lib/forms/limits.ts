// The "Measure limits" form of the agent and providers pages (DESIGN: The dashboard, "Structural
// limits"): which model, which dimensions, and the budgets of the probe. One zod schema, shared by
// the browser and the server action (lib/actions/start-limits.ts), and the states it answers with.
import { z } from 'zod';
import { usdCapField } from './usd-amount';
import type { LimitDimension } from '@/lib/shared/limits-types';

/** The highest budgets the form accepts: a typo of a few zeros should not be a blank cheque. */
export const MAX_PROBE_CALLS = 5000;
export const MAX_PROBE_COST_USD = 100;
export const MAX_PROBE_TRIALS = 50;

const whole = (what: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${what} is a whole number` })
    .int(`${what} is a whole number`)
    .min(min, `${what} is at least ${min}`)
    .max(max, `${what} is at most ${max}`);

export const startLimitsFormSchema = z.object({
  model: z.string({ error: 'which model? the form sent none' }).trim().min(1, 'which model? the form sent an empty one').max(300, 'a model string is at most 300 characters'),
  dimension: z.enum(['all', 'depth', 'list', 'enum'], { error: 'the dimension is all, depth, list or enum' }),
  trials: whole('trials per level', 1, MAX_PROBE_TRIALS),
  // a trial may take two calls (its answer and one repair): fewer could not measure anything
  maxCalls: whole('the call budget', 2, MAX_PROBE_CALLS),
  maxCost: usdCapField(MAX_PROBE_COST_USD, '0.50'),
});

export type StartLimitsForm = z.output<typeof startLimitsFormSchema>;
export type StartLimitsField = keyof StartLimitsForm | 'form';

export type StartLimitsState =
  | { status: 'idle' }
  /** the probe runs in the dashboard's process: GET /api/limits?model=… shows its progress */
  | { status: 'started'; model: string; probeId: string }
  | { status: 'error'; field: StartLimitsField; code: string; message: string };

/** The first issue of a failed parse, on its field. */
export function startLimitsFormError(error: z.ZodError): StartLimitsState {
  const issue = error.issues[0]!;
  const key = issue.path[0];
  const field: StartLimitsField = key === 'model' || key === 'dimension' || key === 'trials' || key === 'maxCalls' || key === 'maxCost' ? key : 'form';
  return { status: 'error', field, code: 'E_FORM', message: issue.message };
}

export function dimensionsOf(choice: StartLimitsForm['dimension']): LimitDimension[] {
  return choice === 'all' ? ['depth', 'list', 'enum'] : [choice];
}
