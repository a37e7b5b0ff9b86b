import type { NextRequest } from 'next/server';
import { listRuns } from '@/db/queries';
import { reply } from '@/lib/contracts/api-route';
import { LIST_RUNS, QUERY_CODE, START_RUN } from '@/lib/contracts/api-routes';
import { routeCaller } from '@/lib/server/access';
import { callerLimits } from '@/lib/contracts/caller-limits';
import type { Labels } from '@/lib/contracts/refusal';
import { BODY_CODE } from '@/lib/contracts/request-body';
import { startRefusalCode, startRunRefusal, type StartRunField } from '@/lib/contracts/start-run';
import { apiRefusal } from '@/lib/server/api-refusal';
import { readBodyCapped } from '@/lib/server/read-body';
import { guardSettings } from '@/lib/server/request-guard';
import { parseRunFilters } from '@/lib/dashboard/run-filters';
import { serverSession, startRun } from '@/lib/server/session';

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

const FIELDS: Labels<StartRunField> = { flow: 'field "flow"', input: 'field "input"' };

export async function POST(req: NextRequest) {
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  // the caller's limits first (runs per minute, then the spend budget): 429 with Retry-After
  const refused = await callerLimits((await serverSession()).db, caller.author, 'run-start');
  if (refused) return apiRefusal(429, refused, { retryAfterS: refused.retryAfterS });
  // the proxy refused a declared length over the cap; this catches a chunked body without one
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return apiRefusal(413, read.refusal);
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return apiRefusal(400, { code: BODY_CODE, message: 'request body must be JSON: {"flow": "...", "input": {...}}' });
  }
  // a body that is no object names no flow
  const parsed = START_RUN.body.safeParse(typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});
  if (!parsed.success) {
    const r = startRunRefusal(parsed.error, FIELDS);
    return apiRefusal(400, r);
  }
  const res = await startRun(parsed.data.flow, parsed.data.input, caller.author);
  if (!res.ok) return apiRefusal(res.status, { code: startRefusalCode(res), message: res.error }, { field: res.field });
  return reply(START_RUN, 202, { id: res.id }, { location: `/api/runs/${res.id}` });
}
