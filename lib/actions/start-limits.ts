'use server';
// Starts a limits probe from the agent or providers page (DESIGN: The dashboard, "Structural
// limits"): the editor check first, the form parsed with its zod schema, then the probe started in
// the background (lib/server/limits-probe.ts). Answers the probe's id; the page watches it through
// GET /api/limits?model=….
import { dimensionsOf, startLimitsFormError, startLimitsFormSchema, type StartLimitsState } from '@/lib/forms/limits';
import { actionCaller } from '@/lib/server/access';
import { startLimitsProbe } from '@/lib/server/limits-probe';

export async function startLimitsAction(_prev: StartLimitsState, fd: FormData): Promise<StartLimitsState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { status: 'error', field: 'form', code: 'E_FORBIDDEN', message: who.error };
  const field = (name: string) => fd.get(name) ?? undefined;
  const parsed = startLimitsFormSchema.safeParse({
    model: field('model'),
    dimension: field('dimension'),
    trials: field('trials'),
    maxCalls: field('maxCalls'),
    maxCost: field('maxCost'),
  });
  if (!parsed.success) return startLimitsFormError(parsed.error);
  const { model, dimension, trials, maxCalls, maxCost } = parsed.data;
  try {
    const res = await startLimitsProbe(who.caller, { model, dimensions: dimensionsOf(dimension), trials, maxCalls, maxCostUsd: maxCost });
    if (!res.ok) return { status: 'error', field: res.code === 'E_MODEL' ? 'model' : 'form', code: res.code, message: res.error };
    return { status: 'started', model, probeId: res.probeId };
  } catch (err) {
    return { status: 'error', field: 'form', code: 'E_PROJECT', message: `the probe could not start: ${err instanceof Error ? err.message : String(err)}` };
  }
}
