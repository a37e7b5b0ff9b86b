'use server';
// Adds a note to a run, one of its nodes or one of its attempts (DESIGN: The dashboard): the caller
// check first (any signed-in role: a note changes no run), the form checked by the add-a-note
// contract (empty or over the size cap refused), the caller's notes per minute counted (E_LIMIT,
// callerLimits), then the note is stored under the caller's name (E_FULL past the notes a run
// keeps). The page re-reads its notes itself (React Query), so nothing is revalidated.
import { addNote } from '@/db/note-queries';
import { addNoteSchema } from '@/lib/contracts/add-note';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { noteFormInput, type NoteFormState } from '@/lib/forms/notes';
import { serverSession } from '@/lib/server/session';
import { formIssue, noteWriter, refusal, storageFailure } from './note-result';

export async function addNoteAction(_prev: NoteFormState, fd: FormData): Promise<NoteFormState> {
  const who = await noteWriter();
  if (!who.ok) return who.state;
  const parsed = addNoteSchema.safeParse(noteFormInput(fd));
  if (!parsed.success) return formIssue(parsed.error);
  const now = Date.now();
  try {
    const { db } = await serverSession();
    const limited = await callerLimits(db, who.author, 'note', { now });
    if (limited) return { status: 'error', code: 'E_LIMIT', message: limited.message };
    const res = await addNote(db, { ...parsed.data, author: who.author, now });
    return res.ok ? { status: 'saved', at: now } : refusal(res);
  } catch (err) {
    return storageFailure('saved', err);
  }
}
