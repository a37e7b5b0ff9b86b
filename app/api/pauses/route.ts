// The rate-limit pauses not over yet (model, until when): the live run page polls them while a run
// is live, to count down the wait of an attempt whose model is paused (lib/dashboard/live-wait.ts).
import { reply } from '@/lib/contracts/api-route';
import { PAUSES } from '@/lib/contracts/api-routes';
import { activePauses } from '@/db/pause-queries';
import { routeCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';
import type { PauseLite } from '@/lib/dashboard/live-wait';

export const dynamic = 'force-dynamic';

export async function GET(req: Request) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { db } = await serverSession();
  const pauses: PauseLite[] = (await activePauses(db)).map((p) => ({ model: p.model, pausedUntil: p.pausedUntil }));
  return reply(PAUSES, 200, { pauses });
}
