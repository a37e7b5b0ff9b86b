// Add a note to a run, one of its nodes or one of its attempts, or change or delete one (DESIGN: Storage,
// "Notes, search and daily statistics"): the zod schemas of the note forms (the run page's
// actions, lib/actions/*-note.ts), the size cap the form's counter and the server count alike, and
// who a note is written as. Notes per minute are the caller's limit (caller-limits.ts).
import { z } from 'zod';

/** A note's size cap, in characters (code points, so an emoji counts once on both sides). */
export const NOTE_MAX_CHARS = 10_000;

/**
 * Who a note is recorded as while the dashboard is open (no account exists): not a name a user can
 * have (user names hold no ":"), so once accounts exist no user inherits the open dashboard's notes.
 */
export const OPEN_NOTE_AUTHOR = 'open:dashboard';

/** The author a caller's notes are written as: the user's name, `token:<name>`, or the open dashboard's. */
export function noteAuthor(callerAuthor: string | null): string {
  return callerAuthor ?? OPEN_NOTE_AUTHOR;
}

export function noteLength(body: string): number {
  let n = 0;
  for (const _ of body) n++;
  return n;
}

const body = z
  .string({ error: 'the form sent no note text' })
  .transform((s) => s.trim())
  .refine((s) => s.length > 0, 'write something first: the note is empty')
  .superRefine((s, ctx) => {
    const n = noteLength(s);
    if (n > NOTE_MAX_CHARS)
      ctx.addIssue({ code: 'custom', message: `a note is at most ${NOTE_MAX_CHARS.toLocaleString('en-US')} characters; this one has ${n.toLocaleString('en-US')}` });
  });

const runId = z.string({ error: 'which run? the form sent no run id' }).min(1, 'which run? the form sent an empty run id').max(200, 'a run id is at most 200 characters');
/** an empty field means "not on a node" / "not on an attempt" */
const blank = (v: unknown) => (v === '' || v === null ? undefined : v);
const nodeId = z.preprocess(blank, z.string().max(200, 'a node id is at most 200 characters').optional());
const seq = z.preprocess(
  blank,
  z.coerce.number({ error: 'an attempt number is a whole number' }).int('an attempt number is a whole number').positive('an attempt number is at least 1').optional(),
);
const noteId = z.coerce.number({ error: 'which note? the form sent no note id' }).int('a note id is a whole number').positive('which note? the form sent no note id');

export const addNoteSchema = z
  .object({ runId, nodeId, seq, body })
  .refine((v) => v.seq === undefined || v.nodeId !== undefined, { message: 'an attempt is named with its node', path: ['seq'] });
export const editNoteSchema = z.object({ noteId, body });
export const deleteNoteSchema = z.object({ noteId });
