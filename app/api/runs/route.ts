import { NextResponse, type NextRequest } from 'next/server';
import { listRuns } from '@/db/queries';
import { routeCaller } from '@/lib/server/access';
import { callerLimits } from '@/lib/contracts/caller-limits';
import type { Labels } from '@/lib/contracts/refusal';
import { startRefusalCode, startRunRefusal, startRunSchema, type StartRunField } from '@/lib/contracts/start-run';
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
  if (!parsed.ok) return NextResponse.json({ error: parsed.error }, { status: 400 });
  const { db } = await serverSession();
  return NextResponse.json(await listRuns(db, { filters: parsed.filters, limit: parsed.limit, cursor: q.get('cursor') }));
}

const FIELDS: Labels<StartRunField> = { flow: 'field "flow"', input: 'field "input"' };

/** A refusal as this route answers it: its status, `{error, code}` (and the input field it is about). */
function refuse(status: number, error: string, code: string, more: { field?: string; retryAfterS?: number } = {}) {
  const headers = more.retryAfterS === undefined ? undefined : { 'retry-after': String(more.retryAfterS) };
  return NextResponse.json({ error, code, ...(more.field !== undefined && { field: more.field }) }, { status, headers });
}

export async function POST(req: NextRequest) {
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  // the caller's limits first (runs per minute, then the spend budget): 429 with Retry-After
  const refused = await callerLimits((await serverSession()).db, caller.author, 'run-start');
  if (refused) return refuse(429, refused.message, refused.code, { retryAfterS: refused.retryAfterS });
  // the proxy refused a declared length over the cap; this catches a chunked body without one
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return refuse(413, read.reason, 'E_BODY');
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return refuse(400, 'request body must be JSON: {"flow": "...", "input": {...}}', 'E_BODY');
  }
  // a body that is no object names no flow
  const parsed = startRunSchema.safeParse(typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});
  if (!parsed.success) {
    const r = startRunRefusal(parsed.error, FIELDS);
    return refuse(400, r.message, r.code);
  }
  const res = await startRun(parsed.data.flow, parsed.data.input, caller.author);
  if (!res.ok) return refuse(res.status, res.error, startRefusalCode(res), { field: res.field });
  return NextResponse.json({ id: res.id }, { status: 202, headers: { location: `/api/runs/${res.id}` } });
}
