// The run page's "Cancel run" button (DESIGN: The dashboard): its one zod schema (the run id) and
// the state the server action answers with.
import { z } from 'zod';

export const cancelRunFormSchema = z.object({
  runId: z.string({ error: 'which run? the form sent no run id' }).min(1, 'which run? the form sent an empty run id').max(200, 'a run id is at most 200 characters'),
});

export type CancelRunState =
  | { status: 'idle' }
  | { status: 'cancelled'; runId: string }
  /** E_NOT_QUEUED: a worker has started the run, it is over, or nothing is queued (SQLite mode); E_RUN: no such run */
  | { status: 'error'; code: 'E_FORBIDDEN' | 'E_RUN' | 'E_NOT_QUEUED' | 'E_PROJECT'; message: string };
