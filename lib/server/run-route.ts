// The preamble of every /api/runs/:id route (DESIGN: Search, "Short run ids"): a viewer at least,
// then the run named by its id, its 8-character short id (from the end of the id) or a unique
// prefix — never a guess: an ambiguous prefix answers 409 with the runs it could mean, an unknown
// one 404.
import 'server-only';
import { NextResponse } from 'next/server';
import type { Db } from '@/db/types';
import { resolveRunId } from '@/db/run-id-queries';
import { AMBIGUOUS_RUN_CODE } from '@/lib/contracts/api-routes';
import { RUN_CODE } from '@/lib/contracts/cancel-run';
import { routeCaller } from './access';
import { serverSession } from './session';
import { ambiguousRunIdWords } from '@/lib/shared/short-id';

/** the 404 of a run id that names no run */
const noSuchRun = (id: string) => NextResponse.json({ error: `no run with id ${id}`, code: RUN_CODE }, { status: 404 });

/**
 * The caller and the run a /api/runs/:id request names, or the answer that refuses it. `load` is
 * tried with the id as given first (the common case costs one read), then with the id a prefix names.
 */
export async function routedRun<T>(
  req: Request,
  params: Promise<{ id: string }>,
  load: (db: Db, runId: string) => Promise<T | null>,
): Promise<Response | { db: Db; runId: string; value: T }> {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const exact = await load(db, id);
  if (exact) return { db, runId: id, value: exact };
  const named = await resolveRunId(db, id);
  if (named.kind === 'ambiguous') {
    return NextResponse.json(
      { error: `"${id}" ${ambiguousRunIdWords(named.matches.length, named.more)}; give more of it`, code: AMBIGUOUS_RUN_CODE, matches: named.matches, more: named.more },
      { status: 409 },
    );
  }
  const byPrefix = named.kind === 'found' ? await load(db, named.id) : null;
  return byPrefix && named.kind === 'found' ? { db, runId: named.id, value: byPrefix } : noSuchRun(id);
}

export async function runRoute<T>(req: Request, params: Promise<{ id: string }>, load: (db: Db, runId: string) => Promise<T | null>): Promise<Response> {
  const routed = await routedRun(req, params, load);
  return routed instanceof Response ? routed : NextResponse.json(routed.value);
}
