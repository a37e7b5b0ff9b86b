'use server';
// Cancels a queued run from its page (DESIGN: The dashboard; Storage, "Workers and the queue"): the
// editor check runs, the run id is parsed by the cancel-a-run contract, and the server cancels the run only if it
// is still queued — re-checked there, in the compare-and-set that cancels it and removes its job,
// whatever the page showed. A run a worker has started, or one already over, is left alone.
import { revalidatePath } from 'next/cache';
import { cancelRunSchema, RUN_CODE } from '@/lib/contracts/cancel-run';
import { firstIssue } from '@/lib/contracts/refusal';
import type { CancelRunState } from '@/lib/forms/cancel-run';
import { editorRefusal } from '@/lib/server/access';
import { NOTHING_QUEUED } from '@/lib/flow/run-mode';
import { cancelRun } from '@/lib/server/session';

export async function cancelRunAction(_prev: CancelRunState, fd: FormData): Promise<CancelRunState> {
  const refusal = await editorRefusal();
  if (refusal) return { status: 'error', code: 'E_FORBIDDEN', message: refusal };
  const parsed = cancelRunSchema.safeParse({ runId: fd.get('runId') ?? undefined });
  if (!parsed.success) return { status: 'error', code: RUN_CODE, message: firstIssue(parsed.error, ['runId'], { runId: 'the run id' }).message };
  const { runId } = parsed.data;
  let res;
  try {
    res = await cancelRun(runId);
  } catch (err) {
    return { status: 'error', code: 'E_PROJECT', message: `the run could not be cancelled: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (res.cancelled) {
    revalidatePath(`/runs/${runId}`);
    revalidatePath('/runs');
    return { status: 'cancelled', runId };
  }
  if ('inProcess' in res) return { status: 'error', code: 'E_NOT_QUEUED', message: NOTHING_QUEUED };
  if (res.status === null) return { status: 'error', code: 'E_RUN', message: `no run with id ${runId}` };
  return { status: 'error', code: 'E_NOT_QUEUED', message: `the run is ${res.status}, not queued: not cancelled` };
}
