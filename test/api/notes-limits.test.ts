// The bounds on notes as callers meet them (DESIGN: Storage, "Notes, search and daily statistics"): a caller adds at
// most 30 notes a minute (E_LIMIT, saying when to come back), a run keeps at most 500 notes
// (E_FULL), and GET /api/runs/:id/notes answers a page at a time (`?limit=&before=`), the newest
// first, with the cursor of the older ones. The clock is virtual (Date only).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createUser, loginEmail } from '@/db/account-queries';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import type { NoteFormState } from '@/lib/forms/notes';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase } from '../helpers/showcase';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
let db: Db;
let clock = T0;
const PASSWORD = 'a long enough password';
/** each user's session cookie (server actions take no API token) */
const cookies: Record<string, string> = {};

const session = async () => (await import('@/lib/server/session')).serverSession();
const signIn = async (name: string) => {
  const auth = await (await import('@/lib/server/auth')).authFor(db);
  const { headers } = await auth.api.signInEmail({ body: { email: loginEmail(name), password: PASSWORD }, returnHeaders: true });
  cookies[name] = headers.get('set-cookie')!.split(';')[0]!;
};
const as = (name: string) => {
  req.headers = { ...LOCAL_HEADERS, cookie: cookies[name]! };
};
const IDLE: NoteFormState = { status: 'idle' };
const add = async (runId: string, body: string) => {
  vi.setSystemTime(clock);
  const fd = new FormData();
  fd.set('runId', runId);
  fd.set('body', body);
  return (await import('@/lib/actions/add-note')).addNoteAction(IDLE, fd);
};
const getNotes = async (runId: string, query = '') => {
  const { GET } = await import('@/app/api/runs/[id]/notes/route');
  as('ana');
  const res = await GET(new Request(`http://localhost/api/runs/${runId}/notes${query}`, { headers: req.headers }), { params: Promise.resolve({ id: runId }) });
  return { status: res.status, body: (await res.json()) as { notes?: { body: string }[]; older?: string | null; error?: string } };
};
let runNo = 0;
const newRun = async () => {
  const id = `limits-run-${++runNo}`;
  await runStore(db).insertRun({ id, project: 'p', flow: 'triage', input: {}, startedAt: T0 });
  return id;
};

beforeAll(async () => {
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  delete process.env.AQVEN_DATABASE_URL;
  db = (await session()).db;
  for (const name of ['ana', 'bo']) {
    await createUser(db, { name, role: 'viewer', password: PASSWORD }, T0);
    await signIn(name);
  }
  vi.useFakeTimers({ toFake: ['Date'] });
}, 90_000);

beforeEach(() => {
  clock += 60 * MINUTE;
});

afterAll(async () => {
  vi.useRealTimers();
  await (await session()).close();
  restoreEnv();
});

describe('notes limits', () => {
  it('a caller adds at most 30 notes a minute; others are not held back, and the next minute the caller is let in again', async () => {
    const run = await newRun();
    as('ana');
    for (let i = 0; i < 30; i++) expect(await add(run, `note ${i}`)).toMatchObject({ status: 'saved' });
    clock += 20_000;
    expect(await add(run, 'one too many')).toEqual({ status: 'error', code: 'E_LIMIT', message: 'too many notes: at most 30 a minute; try again in 40 s' });
    as('bo');
    expect(await add(run, 'from bo')).toMatchObject({ status: 'saved' });
    clock += 40_000;
    as('ana');
    expect(await add(run, 'a new minute')).toMatchObject({ status: 'saved' });
    expect((await getNotes(run)).body.notes).toHaveLength(32);
  }, 60_000);

  it('a run keeps at most 500 notes: the next is refused, saying so, until one is deleted', async () => {
    const run = await newRun();
    await db.q.insert(db.t.notes).values(Array.from({ length: 500 }, (_, i) => ({ runId: run, author: 'bo', body: `n${i}`, createdAt: T0 + i, updatedAt: T0 + i })));
    as('ana');
    expect(await add(run, 'the 501st')).toEqual({ status: 'error', code: 'E_FULL', message: 'this run has 500 notes, the most it keeps: delete one to add another' });
    // another run is not full
    expect(await add(await newRun(), 'elsewhere')).toMatchObject({ status: 'saved' });
    const [oldest] = await db.q.select({ id: db.t.notes.id }).from(db.t.notes).where(eq(db.t.notes.runId, run)).orderBy(db.t.notes.id).limit(1);
    await db.q.delete(db.t.notes).where(eq(db.t.notes.id, oldest!.id));
    expect(await add(run, 'room again')).toMatchObject({ status: 'saved' });
  }, 60_000);

  it('GET answers a page of the newest notes, oldest first within it, and the cursor of the older ones', async () => {
    const run = await newRun();
    // the same time for several: the order then is the order written
    await db.q.insert(db.t.notes).values(Array.from({ length: 7 }, (_, i) => ({ runId: run, author: 'bo', body: `n${i}`, createdAt: T0 + Math.floor(i / 3), updatedAt: T0 })));
    const first = await getNotes(run, '?limit=3');
    expect(first).toMatchObject({ status: 200, body: { notes: [{ body: 'n4' }, { body: 'n5' }, { body: 'n6' }], older: expect.any(String) } });
    const second = await getNotes(run, `?limit=3&before=${encodeURIComponent(first.body.older!)}`);
    expect(second.body.notes!.map((n) => n.body)).toEqual(['n1', 'n2', 'n3']);
    const last = await getNotes(run, `?limit=3&before=${encodeURIComponent(second.body.older!)}`);
    expect(last.body).toEqual({ notes: [expect.objectContaining({ body: 'n0' })], older: null });
    // no limit: the newest 100
    expect((await getNotes(run)).body).toMatchObject({ notes: { length: 7 }, older: null });
    for (const bad of ['?limit=0', '?limit=501', '?limit=ten', '?before=yesterday', '?before=12.x']) {
      const r = await getNotes(run, bad);
      expect(r.status, bad).toBe(400);
      expect(r.body.error, bad).toMatch(/^(limit|before) /);
    }
  }, 60_000);
});
