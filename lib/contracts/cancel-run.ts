// Cancel a queued run (DESIGN: Storage, "Workers and the queue"): the run page's "Cancel run" button
// (lib/actions/cancel-run.ts) and `aqven cancel RUN` (lib/cli/queue.ts) name the run alike; whether
// it is still queued is decided where it is cancelled, in one compare-and-set.
import { z } from 'zod';
import { recordId } from './record-id';

/** E_RUN: no such run, or none named */
export const RUN_CODE = 'E_RUN';

export const cancelRunSchema = z.object({ runId: recordId });
