import { NextResponse, type NextRequest } from 'next/server';
import { listRuns } from '@/db/queries';
import { routeCaller } from '@/lib/server/access';
import { runStartLimit } from '@/lib/server/limits';
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

export async function POST(req: NextRequest) {
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  const limited = await runStartLimit(caller);
  if (limited) return NextResponse.json({ error: limited.error }, { status: 429, headers: { 'retry-after': String(limited.retryAfterS) } });
  // the proxy refused a declared length over the cap; this catches a chunked body without one
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return NextResponse.json({ error: read.reason }, { status: 413 });
  let body: { flow?: unknown; input?: unknown };
  try {
    body = JSON.parse(read.text);
  } catch {
    return NextResponse.json({ error: 'request body must be JSON: {"flow": "...", "input": {...}}' }, { status: 400 });
  }
  if (typeof body?.flow !== 'string') return NextResponse.json({ error: 'field "flow" must be a flow name' }, { status: 400 });
  const res = await startRun(body.flow, body.input ?? {}, caller.author);
  // a spent budget: 429 E_BUDGET, to try again when it resets (00:00 UTC)
  if (!res.ok && res.status === 429) return NextResponse.json({ error: res.error, code: res.code }, { status: 429, headers: { 'retry-after': String(res.retryAfterS) } });
  if (!res.ok) return NextResponse.json({ error: res.error, field: res.field }, { status: res.status });
  return NextResponse.json({ id: res.id }, { status: 202, headers: { location: `/api/runs/${res.id}` } });
}
