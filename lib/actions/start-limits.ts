'use server';
// Starts a limits probe from the agent or providers page (DESIGN: Structural limits,
// "On the dashboard"): the editor check first, the form parsed by the start-a-limits-probe contract
// (lib/contracts/limits-probe.ts, as `aqven limits` parses its flags), then the probe started in the
// background (lib/server/limits-probe.ts) once the caller's limits allow it. Answers the probe's id;
// the page watches it through GET /api/limits?model=….
import { START_LIMITS_PROBE_FIELDS, startLimitsProbeSchema } from '@/lib/contracts/limits-probe';
import { firstIssue } from '@/lib/contracts/refusal';
import { LIMITS_FORM_LABELS, limitsFormInput, type StartLimitsState } from '@/lib/forms/limits';
import { actionCaller } from '@/lib/server/access';
import { startLimitsProbe } from '@/lib/server/limits-probe';

export async function startLimitsAction(_prev: StartLimitsState, fd: FormData): Promise<StartLimitsState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { status: 'error', field: 'form', code: 'E_FORBIDDEN', message: who.error };
  const parsed = startLimitsProbeSchema.safeParse(limitsFormInput(fd));
  if (!parsed.success) return { status: 'error', ...firstIssue(parsed.error, START_LIMITS_PROBE_FIELDS, LIMITS_FORM_LABELS) };
  const probe = parsed.data;
  try {
    const res = await startLimitsProbe(who.caller, probe);
    if (!res.ok) return { status: 'error', field: res.code === 'E_MODEL' ? 'model' : 'form', code: res.code, message: res.error };
    return { status: 'started', model: probe.model, probeId: res.probeId };
  } catch (err) {
    return { status: 'error', field: 'form', code: 'E_PROJECT', message: `the probe could not start: ${err instanceof Error ? err.message : String(err)}` };
  }
}
