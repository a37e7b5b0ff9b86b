'use server';
// Deletes a note (DESIGN: The dashboard): only its author may, checked in the statement that
// deletes (db/note-queries.ts), whatever the page showed.
import { deleteNote } from '@/db/note-queries';
import { deleteNoteSchema } from '@/lib/contracts/add-note';
import { noteFormInput, type NoteFormState } from '@/lib/forms/notes';
import { serverSession } from '@/lib/server/session';
import { formIssue, noteWriter, refusal, storageFailure } from './note-result';

export async function deleteNoteAction(_prev: NoteFormState, fd: FormData): Promise<NoteFormState> {
  const who = await noteWriter();
  if (!who.ok) return who.state;
  const parsed = deleteNoteSchema.safeParse(noteFormInput(fd));
  if (!parsed.success) return formIssue(parsed.error);
  try {
    const res = await deleteNote((await serverSession()).db, { id: parsed.data.noteId, author: who.author });
    return res.ok ? { status: 'deleted', at: Date.now() } : refusal(res);
  } catch (err) {
    return storageFailure('deleted', err);
  }
}
