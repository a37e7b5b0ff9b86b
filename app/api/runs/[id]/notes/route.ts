// The notes of one run (on it, its nodes and its attempts), for the run page to refresh its notes
// and for a service with a token. Every role may read them.
import { listNotes } from '@/db/note-queries';
import type { NotesResponse } from '@/lib/dashboard/note-types';
import { runRoute } from '@/lib/server/run-route';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  return runRoute(req, params, async (db, id): Promise<NotesResponse | null> => {
    const notes = await listNotes(db, id);
    return notes ? { notes } : null;
  });
}
