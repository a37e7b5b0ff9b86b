'use server';
// Starts the replay of one node from its preview page (DESIGN: The dashboard, "Replay with the
// current policy"): the editor check first, the form parsed by the replay-one-node
// contract (lib/contracts/replay.ts, as `aqven replay` parses its arguments), then the replay
// planned again under the files as they are now and refused when its estimate is over the cap;
// on success the browser goes to the replay's run page, where it is shown beside the original.
import { redirect } from 'next/navigation';
import { REPLAY_NODE_FIELDS, replayNodeSchema } from '@/lib/contracts/replay';
import { formFields } from '@/lib/forms/form-fields';
import { replayFormError, type ReplayFormState } from '@/lib/forms/replay';
import { actionCaller } from '@/lib/server/access';
import { replayNodeNow } from '@/lib/server/replay';
import { runHref } from '@/lib/dashboard/run-anchors';

export async function replayNodeAction(_prev: ReplayFormState, fd: FormData): Promise<ReplayFormState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { status: 'error', field: 'form', code: 'E_FORBIDDEN', message: who.error };
  const parsed = replayNodeSchema.safeParse(formFields(fd, REPLAY_NODE_FIELDS));
  if (!parsed.success) return replayFormError(parsed.error);
  const { runId, node, cap } = parsed.data;
  const res = await replayNodeNow(who.caller, runId, node, cap);
  if (!res.ok) return { status: 'error', field: res.code === 'E_CAP' ? 'cap' : 'form', code: res.code, message: res.error };
  redirect(runHref(res.id));
}
