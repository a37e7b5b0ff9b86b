// The run page's "Cancel run" button (DESIGN: The dashboard): the state the server action answers
// with; the run id it posts is parsed by the cancel-a-run contract (lib/contracts/cancel-run.ts).

export type CancelRunState =
  | { status: 'idle' }
  | { status: 'cancelled'; runId: string }
  /** E_NOT_QUEUED: a worker has started the run, it is over, or nothing is queued (SQLite mode); E_RUN: no such run */
  | { status: 'error'; code: 'E_FORBIDDEN' | 'E_RUN' | 'E_NOT_QUEUED' | 'E_PROJECT'; message: string };
