// The "Measure limits" form of the agent and providers pages (DESIGN: Structural limits,
// "On the dashboard"): what it posts, read into the start-a-limits-probe contract (lib/contracts/limits-probe.ts,
// the rules `aqven limits` keeps too), each field's name as the form says it, and the states the
// server action (lib/actions/start-limits.ts) answers with.
import type { StartLimitsProbeField, StartLimitsProbeInput } from '@/lib/contracts/limits-probe';
import type { Labels } from '@/lib/contracts/refusal';
import { formFields } from './form-fields';

export type StartLimitsField = StartLimitsProbeField | 'form';

export type StartLimitsState =
  | { status: 'idle' }
  /** the probe runs in the dashboard's process: GET /api/limits?model=… shows its progress */
  | { status: 'started'; model: string; probeId: string }
  | { status: 'error'; field: StartLimitsField; code: string; message: string };

/** each field as the form labels it, in a refusal's words */
export const LIMITS_FORM_LABELS: Labels<StartLimitsProbeField> = {
  model: 'the model',
  dimension: 'the dimension',
  trials: 'trials per level',
  maxCalls: 'the call budget',
  maxCost: 'the cost cap',
};

/** The form's fields as the contract's input (threshold and max_tokens are fixed: not posted). */
export function limitsFormInput(fd: FormData): StartLimitsProbeInput {
  return formFields(fd, ['model', 'dimension', 'trials', 'maxCalls', 'maxCost']) as StartLimitsProbeInput;
}
