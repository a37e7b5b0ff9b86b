// GET /api/replays/:batchId — the progress of a replay batch (the failures page polls it while the
// batch runs), from any server process: the one running the batch answers from memory, the others
// from the replay_batches row; a batch whose process stopped reads as stopped. 404 only for an id
// never stored (or purged since).
import type { NextRequest } from 'next/server';
import { reply } from '@/lib/contracts/api-route';
import { BATCH_CODE, REPLAY_BATCH } from '@/lib/contracts/api-routes';
import { routeCaller } from '@/lib/server/access';
import { batchProgress } from '@/lib/server/replay';

export const dynamic = 'force-dynamic';

export async function GET(req: NextRequest, { params }: { params: Promise<{ batchId: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { batchId } = await params;
  const batch = await batchProgress(batchId);
  if (!batch) return reply(REPLAY_BATCH, 404, { error: `no replay batch ${batchId} is stored (a wrong id, or purged since)`, code: BATCH_CODE });
  return reply(REPLAY_BATCH, 200, batch, { 'cache-control': 'no-store' });
}
