import { getRunRecord } from '@/lib/flow/stored-run';
import { runRoute } from '@/lib/server/run-route';

export const dynamic = 'force-dynamic';

/** The run record of a run named by its id, its 8-character short id (from the end of the id) or a unique prefix (DESIGN: The run record). */
export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  return runRoute(req, params, getRunRecord);
}
