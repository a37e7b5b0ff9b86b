'use server';
// Clears a model's rate-limit pause from /providers (DESIGN: The dashboard): the model string is
// validated with zod, the editor check runs, the rate_limit_pauses row is deleted (so no process
// reads it again), the dashboard's in-process gate forgets the pause (its calls waiting it out go
// on at once, one first as the probe), and /providers is rendered afresh. On PostgreSQL the
// deletion is announced, so every process's waiters go on too (db/cluster-gate.ts).
import { revalidatePath } from 'next/cache';
import { announcePauseChange } from '@/db/cluster-gate';
import { clearPause } from '@/db/pause-queries';
import { defaultRateGate } from '@/lib/engine/rate-gate';
import { clearPauseFormSchema, type ClearPauseState } from '@/lib/forms/clear-rate-limit-pause';
import { actionCaller } from '@/lib/server/access';
import { auditRequest } from '@/lib/server/audit';
import { serverSession } from '@/lib/server/session';

export async function clearRateLimitPause(_prev: ClearPauseState, fd: FormData): Promise<ClearPauseState> {
  const who = await actionCaller('editor');
  if (!who.ok) return { status: 'error', code: 'E_FORBIDDEN', message: who.error };
  const parsed = clearPauseFormSchema.safeParse({ model: fd.get('model') ?? undefined });
  if (!parsed.success) return { status: 'error', code: 'E_MODEL', message: parsed.error.issues[0]?.message ?? 'invalid model string' };
  const { model } = parsed.data;

  let db;
  try {
    db = (await serverSession()).db;
  } catch (err) {
    return { status: 'error', code: 'E_PROJECT', message: `the project does not load: ${err instanceof Error ? err.message : String(err)}` };
  }
  // the row first: a gate that synced it back in between would pause the model again
  const hadRow = await clearPause(db, model);
  // a notice lost here is made up by every process's poll of the table within a second
  if (hadRow) await announcePauseChange(db, model).catch(() => undefined);
  const hadPause = defaultRateGate.clear(model);
  await auditRequest(db, { kind: 'pause.cleared', actor: who.caller.author, target: model, detail: { hadPause: hadRow || hadPause } });
  revalidatePath('/providers');
  return { status: 'cleared', model, cleared: hadRow || hadPause };
}
