'use server';
// Adds a note to a run, one of its nodes or one of its attempts (DESIGN: The dashboard): the caller
// check first (any signed-in role: a note changes no run), the form checked with its zod schema
// (empty or over the size cap refused), then the note is stored under the caller's name. The page
// re-reads its notes itself (React Query), so nothing is revalidated.
import { addNote } from '@/db/note-queries';
import { addNoteFormSchema, noteFormInput, type NoteFormState } from '@/lib/forms/notes';
import { serverSession } from '@/lib/server/session';
import { formIssue, noteWriter, refusal, storageFailure } from './note-result';

export async function addNoteAction(_prev: NoteFormState, fd: FormData): Promise<NoteFormState> {
  const who = await noteWriter();
  if (!who.ok) return who.state;
  const parsed = addNoteFormSchema.safeParse(noteFormInput(fd));
  if (!parsed.success) return formIssue(parsed.error);
  const now = Date.now();
  try {
    const res = await addNote((await serverSession()).db, { ...parsed.data, author: who.author, now });
    return res.ok ? { status: 'saved', at: now } : refusal(res);
  } catch (err) {
    return storageFailure('saved', err);
  }
}
