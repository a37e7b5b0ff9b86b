// Test control of the in-process simulator (DESIGN: "The provider simulator"): load per-model scripts so a browser
// test can stage one exact scenario. Exists only while providers are simulated (AQVEN_SIMULATE=1), and only for an editor.
// Body: {"scripts": {"model-id": [steps…]}, "chaos"?: profile | null}. `{"scripts": {}}` goes back
// to the project's chaos profile for every model.
import type { NextRequest } from 'next/server';
import { reply } from '@/lib/contracts/api-route';
import { NOT_SIMULATED_CODE, SCRIPT_CODE, SIM_SCRIPTS } from '@/lib/contracts/api-routes';
import { BODY_CODE } from '@/lib/contracts/request-body';
import { validateChaos, validateScripts } from '@/lib/sim';
import { routeCaller } from '@/lib/server/access';
import { dashboardContext } from '@/lib/server/context';
import { apiRefusal } from '@/lib/server/api-refusal';
import { readBodyCapped } from '@/lib/server/read-body';
import { guardSettings } from '@/lib/server/request-guard';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function POST(req: NextRequest) {
  if (!dashboardContext().simulate) return reply(SIM_SCRIPTS, 404, { error: 'not found: providers are not simulated (AQVEN_SIMULATE=1)', code: NOT_SIMULATED_CODE });
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  const { simulated } = await serverSession();
  if (!simulated) return reply(SIM_SCRIPTS, 409, { error: 'providers are not simulated in this session', code: NOT_SIMULATED_CODE });
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return apiRefusal(413, read.refusal);
  let body: { scripts?: unknown; chaos?: unknown };
  try {
    body = JSON.parse(read.text);
  } catch {
    return reply(SIM_SCRIPTS, 400, { error: 'request body must be JSON: {"scripts": {"model-id": [steps]}}', code: BODY_CODE });
  }
  const errors = [...(body.scripts !== undefined ? validateScripts(body.scripts) : []), ...(body.chaos !== undefined ? validateChaos(body.chaos) : [])];
  if (errors.length) return reply(SIM_SCRIPTS, 400, { error: errors.join('; '), code: SCRIPT_CODE });
  if (body.scripts !== undefined) simulated.sim.loadScripts(body.scripts as Parameters<typeof simulated.sim.loadScripts>[0]);
  if (body.chaos !== undefined) simulated.sim.setChaos((body.chaos ?? undefined) as Parameters<typeof simulated.sim.setChaos>[0]);
  return reply(SIM_SCRIPTS, 200, { ok: true });
}
