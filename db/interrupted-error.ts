// The error a run cut off by a dead process carries (DESIGN: Storage): its unfinished nodes fail
// with code `interrupted`, and an attempt in flight is closed with the reason. One home for the
// wording: markInterrupted (db/client.ts) writes it, and whoever explains an interrupted run reads
// it from here.

import { explainHint } from '@/lib/shared/run-codes';

/** The error of a node that was running (or waiting) when its process died. */
export const INTERRUPTED_NODE_ERROR = {
  code: 'interrupted',
  message: 'the process running this node stopped before it finished',
  hint: explainHint('interrupted', 'Start the run again: every attempt that finished is kept above.'),
} as const;

/** The error of an attempt that was in flight when its process died; it has no outcome. */
export const INTERRUPTED_ATTEMPT_ERROR = {
  kind: 'transport',
  message: 'the process stopped before this attempt finished',
} as const;
