// What the note actions share: the caller check (any signed-in role may write a note, which changes
// no run), how a form's zod issue and a refusal of the data layer read as the form's error.
import 'server-only';
import type { z } from 'zod';
import { NOTES_PER_RUN_MAX, type NoteRefusal } from '@/db/note-queries';
import { noteAuthor } from '@/lib/contracts/add-note';
import type { NoteFormState } from '@/lib/forms/notes';
import { actionCaller } from '@/lib/server/access';

/** The author the caller writes notes as, or the refusal (nobody signed in). */
export async function noteWriter(): Promise<{ ok: true; author: string } | { ok: false; state: NoteFormState }> {
  const who = await actionCaller('viewer');
  if (!who.ok) return { ok: false, state: { status: 'error', code: 'E_FORBIDDEN', message: who.error } };
  return { ok: true, author: noteAuthor(who.caller.author) };
}

export function formIssue(err: z.ZodError): NoteFormState {
  const issue = err.issues[0];
  return { status: 'error', code: issue?.path[0] === 'body' ? 'E_BODY' : 'E_FORM', message: issue?.message ?? 'the form is not valid' };
}

const REFUSAL: Record<NoteRefusal['code'], string> = {
  E_RUN: 'no such run: it may have been deleted',
  E_NODE: 'this run has no such node',
  E_ATTEMPT: 'this node has no such attempt',
  E_NOTE: 'the note is gone: it was deleted meanwhile',
  E_NOT_YOURS: 'only its author may change or delete a note',
  E_FULL: `this run has ${NOTES_PER_RUN_MAX} notes, the most it keeps: delete one to add another`,
};

export function refusal(r: NoteRefusal): NoteFormState {
  return { status: 'error', code: r.code, message: REFUSAL[r.code] };
}

export function storageFailure(what: string, err: unknown): NoteFormState {
  return { status: 'error', code: 'E_PROJECT', message: `the note could not be ${what}: ${err instanceof Error ? err.message : String(err)}` };
}
