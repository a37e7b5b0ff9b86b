import { NextResponse, type NextRequest } from 'next/server';
import { listRuns } from '@/db/queries';
import { parseRunFilters } from '@/lib/server/run-filters';
import { serverSession, startRun } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function GET(req: NextRequest) {
  const q = req.nextUrl.searchParams;
  const parsed = parseRunFilters(q);
  if (!parsed.ok) return NextResponse.json({ error: parsed.error }, { status: 400 });
  const { db } = await serverSession();
  return NextResponse.json(await listRuns(db, { filters: parsed.filters, limit: parsed.limit, cursor: q.get('cursor') }));
}

export async function POST(req: NextRequest) {
  let body: { flow?: unknown; input?: unknown };
  try {
    body = await req.json();
  } catch {
    return NextResponse.json({ error: 'request body must be JSON: {"flow": "...", "input": {...}}' }, { status: 400 });
  }
  if (typeof body?.flow !== 'string') return NextResponse.json({ error: 'field "flow" must be a flow name' }, { status: 400 });
  const res = await startRun(body.flow, body.input ?? {});
  if (!res.ok) return NextResponse.json({ error: res.error, field: res.field }, { status: res.status });
  return NextResponse.json({ id: res.id }, { status: 202, headers: { location: `/api/runs/${res.id}` } });
}
