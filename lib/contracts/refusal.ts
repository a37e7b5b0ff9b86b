// How a contract refuses a request: a code (the one the API answers and a form shows), the field it
// is about and a message. A message names its field by FIELD, which each door replaces with its own
// name for it — the form's label, the CLI's flag — so the rule and its words live once.
import type { z } from 'zod';

export interface Refusal<F extends string = string> {
  /** E_FORM (a value that does not parse), E_INPUT, E_LIMIT, E_BUDGET, … */
  code: string;
  /** the request's field it is about; `form` for the request as a whole */
  field: F | 'form';
  message: string;
}

/** where a message names the value it is about */
export const FIELD = '{field}';

/** the code of a value that does not parse (the forms' and CLI's bad usage) */
export const FORM_CODE = 'E_FORM';

/** Each field's name as one door says it: `{ maxCalls: '--max-calls' }`, `{ maxCalls: 'the call budget' }`. */
export type Labels<F extends string> = Readonly<Partial<Record<F, string>>>;

/** `message` with its FIELD said as `label`. */
export function labelled(message: string, label: string): string {
  return message.split(FIELD).join(label);
}

/** The first issue of a failed parse, on its field (one of `fields`, else `form`), in the door's words (`labels`). */
export function firstIssue<F extends string>(error: z.ZodError, fields: readonly F[], labels: Labels<F> = {} as Labels<F>): Refusal<F> {
  const issue = error.issues[0]!;
  const key = issue.path[0];
  const field = fields.find((f) => f === key) ?? 'form';
  const label = field === 'form' ? 'the request' : (labels[field] ?? field);
  return { code: FORM_CODE, field, message: labelled(issue.message, label) };
}
