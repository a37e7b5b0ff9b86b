import { NextResponse } from 'next/server';
import { resolveRunId } from '@/db/run-id-queries';
import { getRunRecord } from '@/lib/flow/stored-run';
import { routeCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

/** The run record of a run named by its id, its 8-character short id or a unique prefix (DESIGN: The run record). */
export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const record = await getRunRecord(db, id);
  if (record) return NextResponse.json(record);
  const named = await resolveRunId(db, id);
  if (named.kind === 'ambiguous') {
    // never a guess: the runs the prefix names, to pick from
    return NextResponse.json(
      { error: `"${id}" is the start of ${named.more ? 'more than ' : ''}${named.matches.length} runs' ids; give more of it`, code: 'E_AMBIGUOUS_RUN_ID', matches: named.matches, more: named.more },
      { status: 409 },
    );
  }
  const byPrefix = named.kind === 'found' ? await getRunRecord(db, named.id) : null;
  if (!byPrefix) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json(byPrefix);
}
