// The replay forms (DESIGN: The dashboard, "Replay with the current policy"): one node from its
// preview page, or a whole failure group from the failures page. One zod schema each, shared by
// the browser and the server action, and the states the actions answer with.
import { z } from 'zod';
import { usdCapField } from './usd-amount';

/** the highest cap a form accepts, in USD: a typo of a few zeros should not be a blank cheque */
export const MAX_CAP_USD = 1000;
/** replays a batch runs at once */
export const BATCH_CONCURRENCY = 4;
/** the most nodes one batch replays (the newest of the group) */
export const BATCH_MAX_NODES = 50;

const capField = usdCapField(MAX_CAP_USD, '0.05');

const idField = (what: string) =>
  z
    .string({ error: `which ${what}? the form sent none` })
    .min(1, `which ${what}? the form sent an empty one`)
    .max(200, `a ${what} is at most 200 characters`);

export const replayNodeFormSchema = z.object({ runId: idField('run'), node: idField('node'), cap: capField });

export const replayGroupFormSchema = z.object({
  sig: idField('failure group'),
  since: z.coerce.number({ error: 'since is a time in milliseconds' }).int().nonnegative(),
  cap: capField,
});

export type ReplayFormState =
  | { status: 'idle' }
  /** the batch started: poll GET /api/replays/:batchId */
  | { status: 'started'; batchId: string; total: number }
  /** field `cap` for a bad cap (or an estimate over it), `form` for the rest; `code` as the refusal says */
  | { status: 'error'; field: 'cap' | 'form'; code: string; message: string };

/** The first issue of a failed parse, on its field. */
export function replayFormError(error: z.ZodError): ReplayFormState {
  const issue = error.issues[0]!;
  return { status: 'error', field: issue.path[0] === 'cap' ? 'cap' : 'form', code: 'E_FORM', message: issue.message };
}

/** A cap the preview page proposes: three times the estimate rounded up to two significant digits, at least $0.01. */
export function suggestedCap(estimateUsd: number): number {
  const x = Math.max(estimateUsd * 3, 0.01);
  const step = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Number((Math.ceil(x / step) * step).toPrecision(2));
}
