// The replay forms (DESIGN: The dashboard, "Replay with the current policy"): one node from its
// preview page, or a whole failure group from the failures page. What they post is read into the
// replay contracts (lib/contracts/replay.ts, the rules `aqven replay` keeps too); here are the
// fields' names as the forms say them, the states the actions answer with, and the cap proposed.
import type { z } from 'zod';
import { firstIssue, type Labels } from '@/lib/contracts/refusal';
import { REPLAY_GROUP_FIELDS, REPLAY_NODE_FIELDS, type ReplayGroupField, type ReplayNodeField } from '@/lib/contracts/replay';

export type ReplayFormState =
  | { status: 'idle' }
  /** the batch started: poll GET /api/replays/:batchId */
  | { status: 'started'; batchId: string; total: number }
  /** field `cap` for a bad cap (or an estimate over it), `form` for the rest; `code` as the refusal says */
  | { status: 'error'; field: 'cap' | 'form'; code: string; message: string };

const LABELS: Labels<ReplayNodeField | ReplayGroupField> = { runId: 'the run id', node: 'the node id', sig: 'the failure group', since: 'since', cap: 'the cost cap' };

/** The first issue of a failed parse, on its field. */
export function replayFormError(error: z.ZodError): ReplayFormState {
  const r = firstIssue(error, [...REPLAY_NODE_FIELDS, ...REPLAY_GROUP_FIELDS], LABELS);
  return { status: 'error', field: r.field === 'cap' ? 'cap' : 'form', code: r.code, message: r.message };
}

/** A cap the preview page proposes: three times the estimate rounded up to two significant digits, at least $0.01. */
export function suggestedCap(estimateUsd: number): number {
  const x = Math.max(estimateUsd * 3, 0.01);
  const step = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Number((Math.ceil(x / step) * step).toPrecision(2));
}
