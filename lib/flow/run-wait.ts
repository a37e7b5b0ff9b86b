// Waiting for a run to end (DESIGN: The dashboard, "Calling AQVEN from a service"): `POST /api/runs`
// with `Prefer: wait=N` and `GET /api/runs/:id?wait=N` hold their answer until the run's status
// is an end or the wait runs out. The run is followed through the database — its status read with
// a growing interval (WAIT_FIRST_MS, ×1.5, at most WAIT_MAX_POLL_MS) — so a run a worker runs in
// another process (PostgreSQL) ends the wait as surely as one run here (SQLite). A client that goes
// away (`signal`) stops the reads. LISTEN/NOTIFY would answer sooner on PostgreSQL, but the run
// store does not notify and SQLite has nothing like it: one way for both, a second at most late.
import { sweepBeforeRead } from '@/db/client';
import { LIVE_RUN_STATUSES, type Db } from '@/db/types';
import { runStatus } from './cancel-queued';
import { sleepFor } from './run-event-source';

/** the first read after the start: a quick run has ended by then */
export const WAIT_FIRST_MS = 50;
/** the longest interval between two reads: an end is seen at most this late */
export const WAIT_MAX_POLL_MS = 1000;

export interface RunWaitOptions {
  now?: () => number;
  /** resolves after `ms`, or early once `signal` aborts */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** the client went away: stop waiting */
  signal?: AbortSignal;
}

/** How a wait ended: the run `ended` (any status but queued or running; `gone` when it is no longer stored), the wait ran out, or the client left. */
export type RunWaitEnd = 'ended' | 'timeout' | 'aborted' | 'gone';

/** The intervals between reads: WAIT_FIRST_MS growing by half each time, at most WAIT_MAX_POLL_MS. */
export function nextPollMs(previousMs: number | null): number {
  return previousMs === null ? WAIT_FIRST_MS : Math.min(Math.round(previousMs * 1.5), WAIT_MAX_POLL_MS);
}

/** Waits at most `waitMs` for run `runId` to end, reading its status from `db`. */
export async function waitForRunEnd(db: Db, runId: string, waitMs: number, o: RunWaitOptions = {}): Promise<RunWaitEnd> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? sleepFor;
  const deadline = now() + waitMs;
  let interval: number | null = null;
  for (;;) {
    if (o.signal?.aborted) return 'aborted';
    // in SQLite mode a run whose process died is swept to interrupted, as before any read
    await sweepBeforeRead(db, now());
    const status = await runStatus(db, runId);
    if (status === null) return 'gone';
    if (!LIVE_RUN_STATUSES.includes(status)) return 'ended';
    const left = deadline - now();
    if (left <= 0) return 'timeout';
    interval = nextPollMs(interval);
    await sleep(Math.min(interval, left), o.signal);
  }
}
