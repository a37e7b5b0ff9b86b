import { runRecordAnswer } from '@/lib/server/run-answer';

export const dynamic = 'force-dynamic';

/** The run record of a run named by its id, its 8-character short id (from the end of the id) or a unique prefix (DESIGN: The run record); `?wait=N` holds it until the run ends or N seconds pass. */
export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  return runRecordAnswer(req, params);
}
