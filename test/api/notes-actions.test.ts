// The note actions and GET /api/runs/:id/notes as callers meet them (DESIGN: The dashboard,
// "Accounts, roles and tokens"): the open dashboard writes as itself; once an account exists, a
// caller with no credentials is refused, any role may write (a note changes no run), only a note's
// author changes or deletes it, and the size cap is enforced by the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@/db/account-queries';
import { listNotes } from '@/db/note-queries';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import type { NoteFormState } from '@/lib/forms/notes';
import { copyShowcase } from '../helpers/showcase';
import { saveEnv } from '../helpers/saved-env';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { requestHeaders, signedInUser } from '../helpers/session-cookie';

/** the request's headers, as each test sets them: this machine, and a token or none */
// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
const T0 = Date.UTC(2026, 0, 1);
const RUN = 'notes-run';
let db: Db;

const session = async () => (await import('@/lib/server/session')).serverSession();
const as = (token: string | null) => {
  req.headers = requestHeaders(LOCAL_HEADERS, token);
};
const form = (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
};
const IDLE: NoteFormState = { status: 'idle' };
const add = async (fields: Record<string, string>) => (await import('@/lib/actions/add-note')).addNoteAction(IDLE, form({ runId: RUN, ...fields }));
const edit = async (noteId: number, body: string) => (await import('@/lib/actions/edit-note')).editNoteAction(IDLE, form({ noteId: String(noteId), body }));
const del = async (noteId: number) => (await import('@/lib/actions/delete-note')).deleteNoteAction(IDLE, form({ noteId: String(noteId) }));
const notes = async () => (await listNotes(db, RUN))!;
const noteBy = async (author: string) => (await notes()).find((n) => n.author === author)!;
const getNotes = async (runId: string, token: string | null) => {
  const { GET } = await import('@/app/api/runs/[id]/notes/route');
  const res = await GET(new Request(`http://localhost/api/runs/${runId}/notes`, { headers: requestHeaders(LOCAL_HEADERS, token) }), {
    params: Promise.resolve({ id: runId }),
  });
  return { status: res.status, body: (await res.json()) as { notes?: { author: string; body: string }[]; error?: string } };
};

beforeAll(async () => {
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  delete process.env.AQVEN_DATABASE_URL; // SQLite, the project's own file (both dialects: db/note-queries.test.ts)
  db = (await session()).db;
  const s = runStore(db);
  await s.insertRun({ id: RUN, project: 'p', flow: 'triage', input: {}, startedAt: T0 });
  s.insertNode({ id: `${RUN}-n`, runId: RUN, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
  s.startAttempt({ id: `${RUN}-a1`, nodeRunId: `${RUN}-n`, runId: RUN, seq: 1, model: 'openrouter:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 });
  await s.flush();
}, 90_000);

afterAll(async () => {
  await (await session()).close();
  restoreEnv();
});

describe('notes from the run page', () => {
  it('while no account exists the dashboard is open: a note is written as the open dashboard, which may change it', async () => {
    as(null);
    expect(await add({ nodeId: 'classify', seq: '1', body: 'from this machine' })).toMatchObject({ status: 'saved' });
    const note = await noteBy('open:dashboard');
    expect(note).toMatchObject({ nodeId: 'classify', seq: 1, body: 'from this machine' });
    expect(await edit(note.id, 'from this machine, edited')).toMatchObject({ status: 'saved' });
    expect((await noteBy('open:dashboard')).body).toBe('from this machine, edited');
  });

  it('once an account exists: nobody signed in is refused; a viewer and an editor may both write', async () => {
    await createUser(db, { name: 'admin', role: 'admin', password: 'a long enough password' }, T0);
    const viewer = await signedInUser(db, 'vera', 'viewer', T0);
    const editor = await signedInUser(db, 'ed', 'editor', T0);

    as(null);
    expect(await add({ body: 'who am I?' })).toEqual({ status: 'error', code: 'E_FORBIDDEN', message: 'sign in first' });
    // nor may the open dashboard's note be changed any more
    const open = await noteBy('open:dashboard');
    expect(await edit(open.id, 'x')).toMatchObject({ code: 'E_FORBIDDEN' });
    expect(await del(open.id)).toMatchObject({ code: 'E_FORBIDDEN' });

    as(viewer);
    expect(await add({ body: 'the viewer **saw** it' })).toMatchObject({ status: 'saved' });
    as(editor);
    expect(await add({ nodeId: 'classify', body: 'the editor too' })).toMatchObject({ status: 'saved' });
    expect(await noteBy('vera')).toMatchObject({ nodeId: null, seq: null, body: 'the viewer **saw** it' });
    expect(await noteBy('ed')).toMatchObject({ nodeId: 'classify', seq: null, body: 'the editor too' });

    // another user's note: refused, unchanged, still there
    const vera = await noteBy('vera');
    expect(await edit(vera.id, 'rewritten by ed')).toEqual({ status: 'error', code: 'E_NOT_YOURS', message: 'only its author may change or delete a note' });
    expect(await del(vera.id)).toMatchObject({ status: 'error', code: 'E_NOT_YOURS' });
    expect(await edit(open.id, 'x')).toMatchObject({ code: 'E_NOT_YOURS' });
    expect((await noteBy('vera')).body).toBe('the viewer **saw** it');

    // the author may
    as(viewer);
    expect(await edit(vera.id, 'the viewer saw it twice')).toMatchObject({ status: 'saved' });
    expect(await del(vera.id)).toMatchObject({ status: 'deleted' });
    expect((await notes()).map((n) => n.author)).toEqual(['open:dashboard', 'ed']);

    // GET: any role reads them, nobody else; an unknown run is a 404
    expect(await getNotes(RUN, viewer)).toMatchObject({ status: 200, body: { notes: [{ author: 'open:dashboard' }, { author: 'ed', body: 'the editor too' }] } });
    expect((await getNotes(RUN, null)).status).toBe(401);
    expect((await getNotes('no-such-run', viewer)).status).toBe(404);
  });

  it('refuses a note over 10,000 characters, an empty one and a target not stored, storing nothing', async () => {
    const editor = await signedInUser(db, 'ed2', 'editor', T0);
    as(editor);
    const before = (await notes()).length;
    expect(await add({ body: '😀'.repeat(10_000) })).toMatchObject({ status: 'saved' }); // characters, not UTF-16 units
    expect(await add({ body: 'x'.repeat(10_001) })).toEqual({ status: 'error', code: 'E_BODY', message: 'a note is at most 10,000 characters; this one has 10,001' });
    expect(await add({ body: '  \n ' })).toMatchObject({ status: 'error', code: 'E_BODY', message: 'write something first: the note is empty' });
    expect(await add({ nodeId: 'nope', body: 'x' })).toMatchObject({ status: 'error', code: 'E_NODE' });
    expect(await add({ nodeId: 'classify', seq: '9', body: 'x' })).toMatchObject({ status: 'error', code: 'E_ATTEMPT' });
    expect(await add({ seq: '1', body: 'x' })).toMatchObject({ status: 'error', code: 'E_FORM' });
    expect(await add({ runId: 'gone', body: 'x' })).toMatchObject({ status: 'error', code: 'E_RUN' });
    const mine = await noteBy('ed2');
    expect(await edit(mine.id, 'y'.repeat(10_001))).toMatchObject({ status: 'error', code: 'E_BODY' });
    expect((await noteBy('ed2')).body).toBe('😀'.repeat(10_000));
    expect((await notes()).length).toBe(before + 1);
  });
});
