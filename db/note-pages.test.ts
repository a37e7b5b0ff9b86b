// The bounds of a run's notes on both dialects (DESIGN: Storage, "Notes, search and daily statistics"): they are read a
// page at a time, the newest first, each page oldest first and ending at a cursor that names the
// next older page exactly (notes written in the same millisecond are told apart by id); and a run
// keeps at most NOTES_PER_RUN_MAX notes.
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { NOTES_PAGE, NOTES_PER_RUN_MAX, addNote, decodeNoteCursor, deleteNote, listNotePage, listNotes } from './note-queries';
import { runStore } from './run-store';
import type { Db } from './types';

const T0 = Date.UTC(2026, 0, 1);

describe.each(DIALECTS)('pages of notes on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.runs); // their notes go with them
    await runStore(db).insertRun({ id: 'r1', project: 'p', flow: 'triage', input: {}, startedAt: T0 });
  });
  /** `n` notes on r1 written by `author`, three per millisecond from T0 */
  const seed = (n: number, author = 'ann') =>
    db.q.insert(db.t.notes).values(Array.from({ length: n }, (_, i) => ({ runId: 'r1', author, body: `n${i}`, createdAt: T0 + Math.floor(i / 3), updatedAt: T0 })));
  const bodies = (p: { notes: { body: string }[] } | null) => p?.notes.map((n) => n.body);

  it('reads the newest page first and walks back by cursor, each page oldest first, with no note twice or left out', async () => {
    await seed(8);
    const p1 = await listNotePage(db, 'r1', { limit: 3 });
    expect(bodies(p1)).toEqual(['n5', 'n6', 'n7']);
    const p2 = await listNotePage(db, 'r1', { limit: 3, before: p1!.older });
    expect(bodies(p2)).toEqual(['n2', 'n3', 'n4']);
    const p3 = await listNotePage(db, 'r1', { limit: 3, before: p2!.older });
    expect(p3).toEqual({ notes: [expect.objectContaining({ body: 'n0' }), expect.objectContaining({ body: 'n1' })], older: null });
    // exactly a page left: no cursor to an empty page
    expect((await listNotePage(db, 'r1', { limit: 8 }))!.older).toBeNull();
    // a note added meanwhile does not shift the older pages
    await addNote(db, { runId: 'r1', author: 'bob', body: 'late', now: T0 + 100 });
    expect(bodies(await listNotePage(db, 'r1', { limit: 3, before: p1!.older }))).toEqual(['n2', 'n3', 'n4']);
  });

  it('without a limit reads the newest NOTES_PAGE; an unknown run is null; a limit or cursor it cannot use is refused', async () => {
    await seed(NOTES_PAGE + 5);
    const newest = (await listNotes(db, 'r1'))!;
    expect(newest).toHaveLength(NOTES_PAGE);
    expect(newest[0]!.body).toBe('n5');
    expect(await listNotePage(db, 'nope')).toBeNull();
    for (const limit of [0, -1, 1.5, NOTES_PER_RUN_MAX + 1]) await expect(listNotePage(db, 'r1', { limit })).rejects.toThrow(RangeError);
    await expect(listNotePage(db, 'r1', { before: 'yesterday' })).rejects.toThrow(RangeError);
    expect(decodeNoteCursor('1767225600000.42')).toEqual({ createdAt: 1767225600000, id: 42 });
    for (const bad of ['', '1.', '.1', '1.2.3', '-1.2', '1e3.2', '99999999999999999.1']) expect(decodeNoteCursor(bad), bad).toBeNull();
  });

  it(`a run keeps at most ${NOTES_PER_RUN_MAX} notes: the next is E_FULL until one is deleted; other runs are not held`, async () => {
    await seed(NOTES_PER_RUN_MAX - 1, 'bob');
    const last = await addNote(db, { runId: 'r1', author: 'ann', body: 'the last one', now: T0 + 1000 });
    expect(last).toMatchObject({ ok: true });
    expect(await addNote(db, { runId: 'r1', author: 'ann', body: 'one more', now: T0 + 1001 })).toEqual({ ok: false, code: 'E_FULL' });
    expect(await deleteNote(db, { id: (last as { note: { id: number } }).note.id, author: 'ann' })).toMatchObject({ ok: true });
    expect(await addNote(db, { runId: 'r1', author: 'ann', body: 'room again', now: T0 + 1002 })).toMatchObject({ ok: true });
    await runStore(db).insertRun({ id: 'r2', project: 'p', flow: 'triage', input: {}, startedAt: T0 });
    expect(await addNote(db, { runId: 'r2', author: 'ann', body: 'elsewhere', now: T0 })).toMatchObject({ ok: true });
    // the whole run fits one page
    expect((await listNotePage(db, 'r1', { limit: NOTES_PER_RUN_MAX }))!.notes).toHaveLength(NOTES_PER_RUN_MAX);
  });
});
