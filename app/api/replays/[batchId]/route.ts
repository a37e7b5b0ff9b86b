// GET /api/replays/:batchId — the progress of a replay batch this server process started (the
// failures page polls it while the batch runs). A batch another process started, or one long
// finished, is not known here: 404; its replays are in the run list all the same (kind replay).
import { NextResponse, type NextRequest } from 'next/server';
import { routeCaller } from '@/lib/server/access';
import { batchProgress } from '@/lib/server/replay';

export const dynamic = 'force-dynamic';

export async function GET(req: NextRequest, { params }: { params: Promise<{ batchId: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { batchId } = await params;
  const batch = batchProgress(batchId);
  if (!batch) return NextResponse.json({ error: `no replay batch ${batchId} is known to this server (it may have been started by another process, or forgotten since)` }, { status: 404 });
  return NextResponse.json(batch, { headers: { 'cache-control': 'no-store' } });
}
