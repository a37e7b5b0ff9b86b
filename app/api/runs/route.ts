import type { NextRequest } from 'next/server';
import { listRuns } from '@/db/queries';
import { reply } from '@/lib/contracts/api-route';
import { LIST_RUNS, QUERY_CODE } from '@/lib/contracts/api-routes';
import { routeCaller } from '@/lib/server/access';
import { parseRunFilters } from '@/lib/dashboard/run-filters';
import { serverSession } from '@/lib/server/session';
import { startRunRequest } from '@/lib/server/start-run-request';

export const dynamic = 'force-dynamic';

export async function GET(req: NextRequest) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const q = req.nextUrl.searchParams;
  const parsed = parseRunFilters(q);
  if (!parsed.ok) return reply(LIST_RUNS, 400, { error: parsed.error, code: QUERY_CODE });
  const { db } = await serverSession();
  return reply(LIST_RUNS, 200, await listRuns(db, { filters: parsed.filters, limit: parsed.limit, cursor: q.get('cursor') }));
}

/** Start a run (lib/server/start-run-request.ts: the checks in their order, Prefer: wait, Idempotency-Key). */
export async function POST(req: NextRequest) {
  return startRunRequest(req);
}
