// Every stored fact of one run (RunFacts: request messages, response and streamed text, tries
// with their times), for the run page's live timeline. The run record stays at /api/runs/:id.
import { NextResponse } from 'next/server';
import { getRunFacts } from '@/db/queries';
import { routeCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const facts = await getRunFacts(db, id);
  if (!facts) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json(facts);
}
