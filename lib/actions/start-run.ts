'use server';
// Starts a run from the /flows form: the input must be JSON and match the flow's input schema
// (checked by startRun); on success the browser goes to the new run's page. Every start counts
// against the caller's runs per minute, as a `POST /api/runs` does (lib/server/limits.ts), and is
// refused, as there, when the caller's daily spend budget is spent (E_BUDGET, checked by startRun).
import { redirect } from 'next/navigation';
import { startRunFieldErrors, startRunFormSchema, type StartRunFormState } from '@/lib/forms/start-run';
import { actionCaller } from '@/lib/server/access';
import { runStartLimit } from '@/lib/server/limits';
import { startRun } from '@/lib/server/session';
import { runHref } from '@/lib/dashboard/run-anchors';

export async function startRunAction(_prev: StartRunFormState, formData: FormData): Promise<StartRunFormState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { fieldErrors: { flow: who.error } };
  const limited = await runStartLimit(who.caller);
  if (limited) return { limited: limited.error };
  const parsed = startRunFormSchema.safeParse({ flow: formData.get('flow'), input: formData.get('input') ?? '' });
  if (!parsed.success) return { fieldErrors: startRunFieldErrors(parsed.error) };
  const res = await startRun(parsed.data.flow, parsed.data.input, who.caller.author);
  if (!res.ok && res.status === 429) return { budget: res.error };
  if (!res.ok) return { fieldErrors: res.status === 404 ? { flow: res.error } : { input: res.error }, inputField: res.field };
  redirect(runHref(res.id));
}
