'use server';
// Changes a note's text (DESIGN: The dashboard): only its author may, checked in the statement that
// writes (db/note-queries.ts), whatever the page showed.
import { editNote } from '@/db/note-queries';
import { editNoteSchema } from '@/lib/contracts/add-note';
import { noteFormInput, type NoteFormState } from '@/lib/forms/notes';
import { serverSession } from '@/lib/server/session';
import { formIssue, noteWriter, refusal, storageFailure } from './note-result';

export async function editNoteAction(_prev: NoteFormState, fd: FormData): Promise<NoteFormState> {
  const who = await noteWriter();
  if (!who.ok) return who.state;
  const parsed = editNoteSchema.safeParse(noteFormInput(fd));
  if (!parsed.success) return formIssue(parsed.error);
  const now = Date.now();
  try {
    const res = await editNote((await serverSession()).db, { id: parsed.data.noteId, author: who.author, body: parsed.data.body, now });
    return res.ok ? { status: 'saved', at: now } : refusal(res);
  } catch (err) {
    return storageFailure('saved', err);
  }
}
