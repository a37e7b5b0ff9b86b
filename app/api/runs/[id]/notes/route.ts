// The notes of one run (on it, its nodes and its attempts), for the run page to refresh its notes
// and for a service with a token. Every role may read them. A page at a time: `?limit=` (1..500,
// default 100) of the newest notes before `?before=` (the `older` cursor of the page after it).
import { decodeNoteCursor, listNotePage, NOTES_PAGE, NOTES_PER_RUN_MAX } from '@/db/note-queries';
import type { NotesResponse } from '@/lib/dashboard/note-types';
import { reply } from '@/lib/contracts/api-route';
import { QUERY_CODE, RUN_NOTES } from '@/lib/contracts/api-routes';
import { routeCaller } from '@/lib/server/access';
import { runRoute } from '@/lib/server/run-route';

export const dynamic = 'force-dynamic';

/** The page asked for, or what is wrong with the query. */
function pageOf(q: URLSearchParams): { limit: number; before: string | null } | { error: string } {
  const rawLimit = q.get('limit');
  const limit = rawLimit === null || rawLimit === '' ? NOTES_PAGE : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > NOTES_PER_RUN_MAX) return { error: `limit must be a whole number from 1 to ${NOTES_PER_RUN_MAX}, got "${rawLimit}"` };
  const before = q.get('before') || null;
  if (before && !decodeNoteCursor(before)) return { error: `before must be the "older" cursor of a page of these notes, got "${before.slice(0, 80)}"` };
  return { limit, before };
}

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const page = pageOf(new URL(req.url).searchParams);
  if ('error' in page) {
    // who is asking first, as for every answer of this route
    const caller = await routeCaller(req, 'viewer');
    return caller instanceof Response ? caller : reply(RUN_NOTES, 400, { error: page.error, code: QUERY_CODE });
  }
  return runRoute(req, params, (db, id): Promise<NotesResponse | null> => listNotePage(db, id, page));
}
