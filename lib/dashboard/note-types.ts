// The shapes of notes as the run page's client components read them from /api (type-only, so
// components depend on the API's contract, never on db/ itself).
import type { NoteView } from '@/db/note-queries';

export type { NoteView };

/** GET /api/runs/:id/notes: a page of the newest notes, oldest first, and the cursor of older ones (null: none) */
export interface NotesResponse {
  notes: NoteView[];
  older: string | null;
}
