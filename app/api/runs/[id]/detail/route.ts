// Every stored fact of one run (RunFacts: request messages, response and streamed text, tries
// with their times), for the run page's live timeline. The run record stays at /api/runs/:id.
import { getRunFacts } from '@/db/queries';
import { runRoute } from '@/lib/server/run-route';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  return runRoute(req, params, getRunFacts);
}
