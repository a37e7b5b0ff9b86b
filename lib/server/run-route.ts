// The preamble of every /api/runs/:id route (DESIGN: Search, "Short run ids"): a viewer at least,
// then the run named by its id, its 8-character short id (from the end of the id) or a unique
// prefix — never a guess: an ambiguous prefix answers 409 with the runs it could mean, an unknown
// one 404.
import 'server-only';
import { NextResponse } from 'next/server';
import type { Db } from '@/db/types';
import { resolveRunId } from '@/db/run-id-queries';
import { routeCaller } from './access';
import { serverSession } from './session';
import { ambiguousRunIdWords } from '@/lib/shared/short-id';

export async function runRoute<T>(req: Request, params: Promise<{ id: string }>, load: (db: Db, runId: string) => Promise<T | null>): Promise<Response> {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const exact = await load(db, id);
  if (exact) return NextResponse.json(exact);
  const named = await resolveRunId(db, id);
  if (named.kind === 'ambiguous') {
    return NextResponse.json(
      { error: `"${id}" ${ambiguousRunIdWords(named.matches.length, named.more)}; give more of it`, code: 'E_AMBIGUOUS_RUN_ID', matches: named.matches, more: named.more },
      { status: 409 },
    );
  }
  const byPrefix = named.kind === 'found' ? await load(db, named.id) : null;
  if (!byPrefix) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json(byPrefix);
}
