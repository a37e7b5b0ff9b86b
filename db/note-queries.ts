// Notes the team leaves on a run, one of its nodes or one of its attempts (DESIGN: The dashboard).
// The page names a node by its flow node id and an attempt by (node id, seq);
// the database ids are resolved here. Only a note's author edits or deletes it: the check is in the
// statement that writes, so no read-then-write race lets anyone else through.
import { and, count, desc, eq, lt, or } from 'drizzle-orm';
import type { Db } from './types';

/** The most notes one run keeps: a note past it is refused (E_FULL) until one is deleted. */
export const NOTES_PER_RUN_MAX = 500;
/** Notes per page of listNotePage when no limit is asked for; NOTES_PER_RUN_MAX is the largest page. */
export const NOTES_PAGE = 100;

/** A note as the run page shows it: where it hangs (run, node, or node + attempt seq) and who wrote it. */
export interface NoteView {
  id: number;
  /** the flow node id noted; null for a note on the whole run */
  nodeId: string | null;
  /** the attempt's seq within the node; null for a note on a run or a node */
  seq: number | null;
  author: string;
  body: string;
  createdAt: number;
  updatedAt: number;
}

export interface NoteTarget {
  runId: string;
  nodeId?: string | null;
  seq?: number | null;
}

/** E_RUN / E_NODE / E_ATTEMPT: the target is not stored; E_NOTE: no such note; E_NOT_YOURS: someone else's; E_FULL: the run has NOTES_PER_RUN_MAX notes. */
export type NoteRefusal = { ok: false; code: 'E_RUN' | 'E_NODE' | 'E_ATTEMPT' | 'E_NOTE' | 'E_NOT_YOURS' | 'E_FULL' };

/** One page of a run's notes: the newest `limit` before the cursor, oldest first, and the cursor of the ones before them (null: none). */
export interface NotePage {
  notes: NoteView[];
  older: string | null;
}

/** Opaque cursor: a note's (created_at, id), the order notes are listed in. */
function encodeNoteCursor(n: NoteView): string {
  return `${n.createdAt}.${n.id}`;
}

/** A cursor from a page's `older`, decoded; null for anything else. */
export function decodeNoteCursor(cursor: string): { createdAt: number; id: number } | null {
  const m = /^(\d{1,16})\.(\d{1,16})$/.exec(cursor);
  if (!m) return null;
  const [createdAt, id] = [Number(m[1]), Number(m[2])];
  return Number.isSafeInteger(createdAt) && Number.isSafeInteger(id) ? { createdAt, id } : null;
}

/**
 * The notes of run `runId` (on it, its nodes and its attempts) a page at a time: the newest
 * `limit` (1..NOTES_PER_RUN_MAX, default NOTES_PAGE) of those before `before` (a page's `older`;
 * none: the newest), listed oldest first (created_at, id). Null when no such run is stored; a
 * limit or cursor it cannot use is a RangeError (the route checks them first).
 */
export async function listNotePage(db: Db, runId: string, page: { limit?: number; before?: string | null } = {}): Promise<NotePage | null> {
  const limit = page.limit ?? NOTES_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > NOTES_PER_RUN_MAX) throw new RangeError(`a page of notes holds 1 to ${NOTES_PER_RUN_MAX}, got ${limit}`);
  const cur = page.before ? decodeNoteCursor(page.before) : null;
  if (page.before && !cur) throw new RangeError(`"${page.before.slice(0, 80)}" is not a cursor of the notes`);
  const { notes, nodeRuns, attempts, runs } = db.t;
  const run = await db.q.select({ id: runs.id }).from(runs).where(eq(runs.id, runId)).limit(1);
  if (!run.length) return null;
  const rows = await db.q
    .select({
      id: notes.id,
      nodeId: nodeRuns.nodeId,
      seq: attempts.seq,
      author: notes.author,
      body: notes.body,
      createdAt: notes.createdAt,
      updatedAt: notes.updatedAt,
    })
    .from(notes)
    .leftJoin(nodeRuns, eq(nodeRuns.id, notes.nodeRunId))
    .leftJoin(attempts, eq(attempts.id, notes.attemptId))
    .where(and(eq(notes.runId, runId), cur ? or(lt(notes.createdAt, cur.createdAt), and(eq(notes.createdAt, cur.createdAt), lt(notes.id, cur.id))) : undefined))
    .orderBy(desc(notes.createdAt), desc(notes.id))
    .limit(limit + 1);
  const shown = rows.slice(0, limit);
  return { notes: shown.reverse(), older: rows.length > limit ? encodeNoteCursor(rows[limit - 1]!) : null };
}

/** The newest NOTES_PAGE notes of run `runId` (or `page`), oldest first; null when no such run is stored. */
export async function listNotes(db: Db, runId: string, page: { limit?: number; before?: string | null } = {}): Promise<NoteView[] | null> {
  return (await listNotePage(db, runId, page))?.notes ?? null;
}

/** The stored ids of a target, or which part of it is not stored. */
async function resolveTarget(db: Db, t: NoteTarget): Promise<{ ok: true; nodeRunId: string | null; attemptId: string | null } | NoteRefusal> {
  const { runs, nodeRuns, attempts } = db.t;
  const run = await db.q.select({ id: runs.id }).from(runs).where(eq(runs.id, t.runId)).limit(1);
  if (!run.length) return { ok: false, code: 'E_RUN' };
  if (t.nodeId == null) return { ok: true, nodeRunId: null, attemptId: null };
  const node = await db.q
    .select({ id: nodeRuns.id })
    .from(nodeRuns)
    .where(and(eq(nodeRuns.runId, t.runId), eq(nodeRuns.nodeId, t.nodeId)))
    .limit(1);
  if (!node.length) return { ok: false, code: 'E_NODE' };
  const nodeRunId = node[0]!.id;
  if (t.seq == null) return { ok: true, nodeRunId, attemptId: null };
  const att = await db.q
    .select({ id: attempts.id })
    .from(attempts)
    .where(and(eq(attempts.nodeRunId, nodeRunId), eq(attempts.seq, t.seq)))
    .limit(1);
  if (!att.length) return { ok: false, code: 'E_ATTEMPT' };
  return { ok: true, nodeRunId, attemptId: att[0]!.id };
}

/**
 * Adds a note on `target` by `author` (a note on an attempt also names the attempt's node run), or
 * E_FULL when the run has NOTES_PER_RUN_MAX notes. The count and the insert are two statements: adds
 * racing at the cap may pass it together, by a few (each caller adds 30 a minute at most).
 */
export async function addNote(db: Db, n: NoteTarget & { author: string; body: string; now: number }): Promise<{ ok: true; note: NoteView } | NoteRefusal> {
  const target = await resolveTarget(db, n);
  if (!target.ok) return target;
  const { notes } = db.t;
  const [held] = await db.q.select({ n: count() }).from(notes).where(eq(notes.runId, n.runId));
  if (Number(held?.n ?? 0) >= NOTES_PER_RUN_MAX) return { ok: false, code: 'E_FULL' };
  const [row] = await db.q
    .insert(notes)
    .values({ runId: n.runId, nodeRunId: target.nodeRunId, attemptId: target.attemptId, author: n.author, body: n.body, createdAt: n.now, updatedAt: n.now })
    .returning({ id: notes.id });
  return {
    ok: true,
    note: { id: row!.id, nodeId: target.nodeRunId ? n.nodeId! : null, seq: target.attemptId ? n.seq! : null, author: n.author, body: n.body, createdAt: n.now, updatedAt: n.now },
  };
}

/** Why a write by `author` touched no note: there is none with this id, or it is someone else's. */
async function whyNot(db: Db, id: number): Promise<NoteRefusal> {
  const { notes } = db.t;
  const found = await db.q.select({ id: notes.id }).from(notes).where(eq(notes.id, id)).limit(1);
  return { ok: false, code: found.length ? 'E_NOT_YOURS' : 'E_NOTE' };
}

/** Replaces the body of note `id`, if `author` wrote it. */
export async function editNote(db: Db, n: { id: number; author: string; body: string; now: number }): Promise<{ ok: true; runId: string } | NoteRefusal> {
  const { notes } = db.t;
  const [row] = await db.q
    .update(notes)
    .set({ body: n.body, updatedAt: n.now })
    .where(and(eq(notes.id, n.id), eq(notes.author, n.author)))
    .returning({ runId: notes.runId });
  return row ? { ok: true, runId: row.runId } : whyNot(db, n.id);
}

/** Deletes note `id`, if `author` wrote it. */
export async function deleteNote(db: Db, n: { id: number; author: string }): Promise<{ ok: true; runId: string } | NoteRefusal> {
  const { notes } = db.t;
  const [row] = await db.q
    .delete(notes)
    .where(and(eq(notes.id, n.id), eq(notes.author, n.author)))
    .returning({ runId: notes.runId });
  return row ? { ok: true, runId: row.runId } : whyNot(db, n.id);
}
