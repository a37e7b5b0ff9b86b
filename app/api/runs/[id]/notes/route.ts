// The notes of one run (on it, its nodes and its attempts), for the run page to refresh its notes
// and for a service with a token. Every role may read them.
import { NextResponse } from 'next/server';
import { listNotes } from '@/db/note-queries';
import type { NotesResponse } from '@/lib/dashboard/note-types';
import { routeCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const notes = await listNotes(db, id);
  if (!notes) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json({ notes } satisfies NotesResponse);
}
