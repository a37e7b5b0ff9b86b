// GET /api/limits?model=M[&model=M2…] — the newest measured structural limits of those models (every
// level measured, its rates and intervals) and the limits probes of them this server process runs
// or ran lately. The agent and providers pages poll it while a probe runs.
import type { NextRequest } from 'next/server';
import { reply } from '@/lib/contracts/api-route';
import { LIMITS, QUERY_CODE } from '@/lib/contracts/api-routes';
import { routeCaller } from '@/lib/server/access';
import { limitsResponse } from '@/lib/server/limits-probe';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

/** models one request may ask for */
const MAX_MODELS = 50;

export async function GET(req: NextRequest) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const models = [...new Set(req.nextUrl.searchParams.getAll('model').filter((m) => m.length > 0 && m.length <= 300))];
  if (models.length === 0) return reply(LIMITS, 400, { error: 'name the models: ?model=provider:model-id (repeat for more)', code: QUERY_CODE });
  if (models.length > MAX_MODELS) return reply(LIMITS, 400, { error: `at most ${MAX_MODELS} models per request`, code: QUERY_CODE });
  const { db } = await serverSession();
  return reply(LIMITS, 200, await limitsResponse(db, models), { 'cache-control': 'no-store' });
}
