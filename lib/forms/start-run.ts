// The start-run form of /flows: what it posts (the flow, the input as JSON text), parsed by the
// start-a-run contract (lib/contracts/start-run.ts) in the browser before sending and again by the
// server action, which also checks the input against the flow's schema; the state it answers with.
import type { z } from 'zod';
import type { Labels } from '@/lib/contracts/refusal';
import { startRunRefusal, type StartRunField } from '@/lib/contracts/start-run';

export interface StartRunFormState {
  /** message per form field ("input", "flow"), shown next to it */
  fieldErrors?: Partial<Record<StartRunField, string>>;
  /** the input field the flow's schema rejected, e.g. "input.ticket" */
  inputField?: string;
  /** the caller started too many runs this minute (AQVEN_RUNS_PER_MINUTE): when to try again */
  limited?: string;
  /** the caller's daily spend budget is spent (E_BUDGET): whose, how much, when it resets */
  budget?: string;
}

/** each field as the form says it */
export const START_RUN_FORM_LABELS: Labels<StartRunField> = { flow: 'the flow', input: 'the input' };

export function startRunFieldErrors(error: z.ZodError): StartRunFormState['fieldErrors'] {
  const r = startRunRefusal(error, START_RUN_FORM_LABELS);
  return { [r.field]: r.message };
}
