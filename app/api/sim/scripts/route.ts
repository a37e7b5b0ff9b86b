// Test control of the in-process simulator (DESIGN: "The provider simulator"): load per-model scripts so a browser
// test can stage one exact scenario. Exists only while providers are simulated (AQVEN_SIMULATE=1), and only for an editor.
// Body: {"scripts": {"model-id": [steps…]}, "chaos"?: profile | null}. `{"scripts": {}}` goes back
// to the project's chaos profile for every model.
import { NextResponse, type NextRequest } from 'next/server';
import { validateChaos, validateScripts } from '@/lib/sim';
import { routeCaller } from '@/lib/server/access';
import { dashboardContext } from '@/lib/server/context';
import { apiRefusal } from '@/lib/server/api-refusal';
import { readBodyCapped } from '@/lib/server/read-body';
import { guardSettings } from '@/lib/server/request-guard';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function POST(req: NextRequest) {
  if (!dashboardContext().simulate) return NextResponse.json({ error: 'not found' }, { status: 404 });
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  const { simulated } = await serverSession();
  if (!simulated) return NextResponse.json({ error: 'providers are not simulated in this session' }, { status: 409 });
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return apiRefusal(413, read.refusal);
  let body: { scripts?: unknown; chaos?: unknown };
  try {
    body = JSON.parse(read.text);
  } catch {
    return NextResponse.json({ error: 'request body must be JSON: {"scripts": {"model-id": [steps]}}' }, { status: 400 });
  }
  const errors = [...(body.scripts !== undefined ? validateScripts(body.scripts) : []), ...(body.chaos !== undefined ? validateChaos(body.chaos) : [])];
  if (errors.length) return NextResponse.json({ error: errors.join('; ') }, { status: 400 });
  if (body.scripts !== undefined) simulated.sim.loadScripts(body.scripts as Parameters<typeof simulated.sim.loadScripts>[0]);
  if (body.chaos !== undefined) simulated.sim.setChaos((body.chaos ?? undefined) as Parameters<typeof simulated.sim.setChaos>[0]);
  return NextResponse.json({ ok: true });
}
