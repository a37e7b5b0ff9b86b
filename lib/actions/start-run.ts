'use server';
// Starts a run from the /flows form: the caller's limits first (callerLimits: the runs per minute,
// counted as a `POST /api/runs` counts them, then the daily spend budget, E_BUDGET), then the form
// parsed by the start-a-run contract (the input must be JSON) and the input checked against the
// flow's schema (by startRun); on success the browser goes to the new run's page.
import { redirect } from 'next/navigation';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { startRunTextSchema } from '@/lib/contracts/start-run';
import { startRunFieldErrors, type StartRunFormState } from '@/lib/forms/start-run';
import { actionCaller } from '@/lib/server/access';
import { serverSession, startRun } from '@/lib/server/session';
import { runHref } from '@/lib/dashboard/run-anchors';

export async function startRunAction(_prev: StartRunFormState, formData: FormData): Promise<StartRunFormState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { fieldErrors: { flow: who.error } };
  const refused = await callerLimits((await serverSession()).db, who.caller.author, 'run-start');
  if (refused) return refused.code === 'E_BUDGET' ? { budget: refused.message } : { limited: refused.message };
  const parsed = startRunTextSchema.safeParse({ flow: formData.get('flow') ?? undefined, input: formData.get('input') ?? '' });
  if (!parsed.success) return { fieldErrors: startRunFieldErrors(parsed.error) };
  const res = await startRun(parsed.data.flow, parsed.data.input, who.caller.author);
  if (!res.ok) return { fieldErrors: res.status === 404 ? { flow: res.error } : { input: res.error }, inputField: res.field };
  redirect(runHref(res.id));
}
