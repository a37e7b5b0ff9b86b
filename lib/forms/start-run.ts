// The start-run form of /flows: its one zod schema, shared by the browser (a JSON check before
// sending) and the server action (which also validates the input against the flow's schema).
import { z } from 'zod';

export const startRunFormSchema = z.object({
  flow: z.string().min(1, 'choose a flow'),
  input: z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `not valid JSON: ${err instanceof Error ? err.message : String(err)}` });
      return z.NEVER;
    }
  }),
});

export interface StartRunFormState {
  /** message per form field ("input", "flow"), shown next to it */
  fieldErrors?: Partial<Record<'flow' | 'input', string>>;
  /** the input field the flow's schema rejected, e.g. "input.ticket" */
  inputField?: string;
  /** the caller started too many runs this minute (AQVEN_RUNS_PER_MINUTE): when to try again */
  limited?: string;
  /** the caller's daily spend budget is spent (E_BUDGET): whose, how much, when it resets */
  budget?: string;
}

export function startRunFieldErrors(error: z.ZodError): StartRunFormState['fieldErrors'] {
  const out: NonNullable<StartRunFormState['fieldErrors']> = {};
  for (const issue of error.issues) {
    const key = issue.path[0] === 'flow' ? 'flow' : 'input';
    out[key] ??= issue.message;
  }
  return out;
}
