// Notes on runs, nodes and attempts, on both dialects: where a note hangs is resolved from the
// page's names (node id, attempt seq), only its author edits or deletes it, and it goes with its run.
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { addNote, deleteNote, editNote, listNotes } from './note-queries';
import { runStore } from './run-store';
import type { Db } from './types';
import { attemptRecord } from '../test/helpers/attempt-record';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };
const T0 = Date.UTC(2026, 0, 1);

const attempt = (seq: number) => attemptRecord(seq);

/** A finished run with node "classify" (attempts 1 and 2) and node "draft-reply" (attempt 1). */
async function seedRun(db: Db, id: string) {
  const s = runStore(db);
  await s.insertRun({ id, project: 'p', flow: 'triage', input: {}, startedAt: T0 });
  const durable: Promise<void>[] = [];
  for (const [ord, nodeId, seqs] of [
    [0, 'classify', [1, 2]],
    [1, 'draft-reply', [1]],
  ] as const) {
    const nr = `${id}-${nodeId}`;
    s.insertNode({ id: nr, runId: id, nodeId, agent: 'a', turn: 1, ord, status: 'running', policy: null, startedAt: T0 });
    for (const seq of seqs) {
      const a = attempt(seq);
      s.startAttempt({ id: `${nr}-a${seq}`, nodeRunId: nr, runId: id, seq, model: a.model, chainIndex: 0, answerNo: seq, request: a.request, startedAt: a.startedAt });
      durable.push(s.finishAttempt(`${nr}-a${seq}`, a));
    }
    s.finishNode({ id: nr, status: 'succeeded', output: {}, error: null, usage, finishedAt: T0 + 5 });
  }
  durable.push(s.finishRun({ id, status: 'succeeded', output: null, error: null, turns: 1, usage, finishedAt: T0 + 10 }));
  await s.flush();
  await Promise.all(durable);
}

describe.each(DIALECTS)('notes on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.runs); // their nodes, attempts and notes go with them (ON DELETE CASCADE)
    await seedRun(db, 'r1');
  });

  it('adds notes on the run, a node and an attempt, and lists them oldest first with where they hang', async () => {
    const onAttempt = await addNote(db, { runId: 'r1', nodeId: 'classify', seq: 2, author: 'ann', body: 'the 2nd answer was cut', now: T0 + 3 });
    const onRun = await addNote(db, { runId: 'r1', author: 'bob', body: 'looking into it', now: T0 + 1 });
    const onNode = await addNote(db, { runId: 'r1', nodeId: 'draft-reply', author: 'token:ci', body: '**slow**', now: T0 + 2 });
    expect([onAttempt.ok, onRun.ok, onNode.ok]).toEqual([true, true, true]);
    const listed = (await listNotes(db, 'r1'))!;
    expect(listed.map(({ id: _, ...n }) => n)).toEqual([
      { nodeId: null, seq: null, author: 'bob', body: 'looking into it', createdAt: T0 + 1, updatedAt: T0 + 1 },
      { nodeId: 'draft-reply', seq: null, author: 'token:ci', body: '**slow**', createdAt: T0 + 2, updatedAt: T0 + 2 },
      { nodeId: 'classify', seq: 2, author: 'ann', body: 'the 2nd answer was cut', createdAt: T0 + 3, updatedAt: T0 + 3 },
    ]);
    // the answer of addNote is the note as listed
    expect(onAttempt.ok && onAttempt.note).toEqual(listed[2]);
    // a note on an attempt also names its node run, so the node's cascade takes it too
    const [row] = await db.q.select().from(db.t.notes).where(eq(db.t.notes.id, listed[2]!.id));
    expect(row).toMatchObject({ nodeRunId: 'r1-classify', attemptId: 'r1-classify-a2' });
  });

  it('refuses a target that is not stored, by what is missing', async () => {
    const base = { author: 'ann', body: 'x', now: T0 };
    expect(await addNote(db, { ...base, runId: 'nope' })).toEqual({ ok: false, code: 'E_RUN' });
    expect(await addNote(db, { ...base, runId: 'r1', nodeId: 'manual_review' })).toEqual({ ok: false, code: 'E_NODE' });
    expect(await addNote(db, { ...base, runId: 'r1', nodeId: 'draft-reply', seq: 2 })).toEqual({ ok: false, code: 'E_ATTEMPT' });
    expect(await listNotes(db, 'r1')).toEqual([]);
  });

  it('only the author edits or deletes a note; anyone else is told it is not theirs', async () => {
    const added = await addNote(db, { runId: 'r1', nodeId: 'classify', author: 'ann', body: 'first', now: T0 });
    if (!added.ok) throw new Error(added.code);
    const id = added.note.id;

    expect(await editNote(db, { id, author: 'bob', body: 'hijacked', now: T0 + 5 })).toEqual({ ok: false, code: 'E_NOT_YOURS' });
    expect(await deleteNote(db, { id, author: 'bob' })).toEqual({ ok: false, code: 'E_NOT_YOURS' });
    expect(await listNotes(db, 'r1')).toMatchObject([{ id, body: 'first', updatedAt: T0 }]);

    expect(await editNote(db, { id, author: 'ann', body: 'second', now: T0 + 7 })).toEqual({ ok: true, runId: 'r1' });
    expect(await listNotes(db, 'r1')).toMatchObject([{ id, body: 'second', author: 'ann', createdAt: T0, updatedAt: T0 + 7 }]);

    expect(await deleteNote(db, { id, author: 'ann' })).toEqual({ ok: true, runId: 'r1' });
    expect(await listNotes(db, 'r1')).toEqual([]);
    expect(await editNote(db, { id, author: 'ann', body: 'again', now: T0 + 9 })).toEqual({ ok: false, code: 'E_NOTE' });
    expect(await deleteNote(db, { id, author: 'ann' })).toEqual({ ok: false, code: 'E_NOTE' });
  });

  it('a run deleted takes its notes with it; another run keeps its own', async () => {
    await seedRun(db, 'r2');
    await addNote(db, { runId: 'r1', author: 'ann', body: 'on r1', now: T0 });
    await addNote(db, { runId: 'r1', nodeId: 'classify', seq: 1, author: 'ann', body: 'on r1 attempt', now: T0 });
    await addNote(db, { runId: 'r2', author: 'ann', body: 'on r2', now: T0 });
    await db.q.delete(db.t.runs).where(eq(db.t.runs.id, 'r1'));
    expect(await listNotes(db, 'r1')).toBeNull(); // no run any more
    expect((await db.q.select({ body: db.t.notes.body }).from(db.t.notes)).map((n) => n.body)).toEqual(['on r2']);
  });
});
