// The note forms of the run page (DESIGN: The dashboard): add, edit and delete — what they post,
// read into the note contracts (lib/contracts/add-note.ts: the schemas, the size cap, who a note is
// written as), and the state the server actions answer with.

/** What the note forms send, read from their FormData. */
export function noteFormInput(fd: FormData): Record<string, unknown> {
  const get = (k: string) => fd.get(k) ?? undefined;
  return { runId: get('runId'), nodeId: get('nodeId'), seq: get('seq'), noteId: get('noteId'), body: get('body') };
}

export type NoteErrorCode =
  | 'E_FORBIDDEN'
  /** the note is empty or over NOTE_MAX_CHARS */
  | 'E_BODY'
  /** the form named no run, node, attempt or note it could */
  | 'E_FORM'
  | 'E_RUN'
  | 'E_NODE'
  | 'E_ATTEMPT'
  /** no such note (deleted meanwhile) */
  | 'E_NOTE'
  /** someone else's note: only its author edits or deletes it */
  | 'E_NOT_YOURS'
  /** the caller added NOTES_PER_MINUTE notes this minute (lib/contracts/caller-limits.ts) */
  | 'E_LIMIT'
  /** the run holds NOTES_PER_RUN_MAX notes (db/note-queries.ts) */
  | 'E_FULL'
  | 'E_PROJECT';

export type NoteFormState = { status: 'idle' } | { status: 'saved' | 'deleted'; at: number } | { status: 'error'; code: NoteErrorCode; message: string };
