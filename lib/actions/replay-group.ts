'use server';
// Replays a whole failure group (DESIGN: The dashboard, "Replay with the current policy"): the
// editor check first, the form parsed by the replay-a-group
// contract (lib/contracts/replay.ts), then the group's newest nodes (at most
// BATCH_MAX_NODES) replayed in the background, BATCH_CONCURRENCY at a time under the batch's cost
// cap. Answers the batch id; its progress is GET /api/replays/:batchId.
import { failureGroupNodes } from '@/db/failure-queries';
import { BATCH_MAX_NODES, REPLAY_GROUP_FIELDS, replayGroupSchema } from '@/lib/contracts/replay';
import { formFields } from '@/lib/forms/form-fields';
import { replayFormError, type ReplayFormState } from '@/lib/forms/replay';
import { actionCaller } from '@/lib/server/access';
import { auditRequest } from '@/lib/server/audit';
import { replayBatchNow } from '@/lib/server/replay';
import { serverSession } from '@/lib/server/session';

export async function replayGroupAction(_prev: ReplayFormState, fd: FormData): Promise<ReplayFormState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { status: 'error', field: 'form', code: 'E_FORBIDDEN', message: who.error };
  const parsed = replayGroupSchema.safeParse(formFields(fd, REPLAY_GROUP_FIELDS));
  if (!parsed.success) return replayFormError(parsed.error);
  const { sig, since, cap } = parsed.data;
  const { db } = await serverSession();
  const nodes = await failureGroupNodes(db, sig, { since, limit: BATCH_MAX_NODES });
  if (nodes.length === 0) return { status: 'error', field: 'form', code: 'E_GROUP', message: 'this failure group has no failed node in the period shown: nothing to replay' };
  const res = await replayBatchNow(
    who.caller,
    sig,
    nodes.map((n) => ({ runId: n.runId, nodeId: n.nodeId })),
    cap,
  );
  await auditRequest(db, { kind: 'replay-batch.started', actor: who.caller.author, target: res.batchId, detail: { group: sig, nodes: res.total, capUsd: cap } });
  return { status: 'started', batchId: res.batchId, total: res.total };
}
