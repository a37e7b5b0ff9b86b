// The statuses of a run as the dashboard shows and filters them (DESIGN: Storage, `runs.status`;
// The dashboard). Pure and type-only over db/, so client components and the server's filter
// parser share one list.
import type { RunStatus } from '@/db/types';

/** Every run status, in the order a run can pass through them (the run filter's choices). */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'interrupted', 'cancelled'] as const satisfies readonly RunStatus[];

// a status added to RunStatus and not listed here is a type error
type Unlisted = Exclude<RunStatus, (typeof RUN_STATUSES)[number]>;
const _everyStatusListed: Unlisted extends never ? true : never = true;

/** What each status means, for the badge's tooltip. */
export const RUN_STATUS_NOTES: Record<RunStatus, string> = {
  queued: 'waiting for a worker to start it',
  running: 'in progress',
  succeeded: 'finished with an output',
  failed: 'finished with an error',
  interrupted: 'its process stopped or died before it finished',
  cancelled: 'cancelled: it will not run (any further)',
};

/** A run that may still change (queued or running): its views keep polling; every other status is final. */
export function isLiveRun(status: RunStatus): boolean {
  return status === 'queued' || status === 'running';
}

/** The timeline's line for a run with no node yet: a queued run has none until a worker starts it. */
export function runWithoutNodes(status: RunStatus): string {
  switch (status) {
    case 'queued':
      return 'Queued: waiting for a worker to start it. This page follows it as it runs.';
    case 'running':
      return 'No node has started yet.';
    case 'cancelled':
      return 'Cancelled before any node started.';
    case 'interrupted':
      return 'Interrupted before any node started.';
    case 'succeeded':
    case 'failed':
      return 'No node ran.';
  }
}
