// GET /api/runs/:id takes a run's 8-character short id (from its id's last group; or any unique prefix of 4 or more) as well
// as its id; a prefix naming several runs is a 409 listing them, never one of them picked.
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import { copyShowcase } from '../helpers/showcase';
import { saveEnv } from '../helpers/saved-env';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
const A = 'c0ffee00-0000-4000-8000-00000000000a';
const B = 'c0ffee00-0000-4000-8000-00000000000b';
const C = 'c0ffee11-0000-4000-8000-00000000000c';
let db: Db;

beforeAll(async () => {
  process.env.AQVEN_PROJECT = copyShowcase();
  delete process.env.AQVEN_DATABASE_URL;
  const { serverSession } = await import('@/lib/server/session');
  db = (await serverSession()).db;
  await db.q.insert(db.t.runs).values([
    { id: A, project: 'showcase', flow: 'triage', status: 'succeeded', input: { ticket: 'a' }, startedAt: Date.UTC(2026, 0, 1, 9) },
    { id: B, project: 'showcase', flow: 'long-answer', status: 'failed', input: { question: 'b' }, startedAt: Date.UTC(2026, 0, 1, 10) },
    { id: C, project: 'showcase', flow: 'triage', status: 'succeeded', input: { ticket: 'c' }, startedAt: Date.UTC(2026, 0, 1, 11) },
  ]);
}, 90_000);

afterAll(async () => {
  const { serverSession } = await import('@/lib/server/session');
  await (await serverSession()).close();
  restoreEnv();
});

const get = async (id: string) => {
  const { GET } = await import('@/app/api/runs/[id]/route');
  const res = await GET(new NextRequest(`http://localhost/api/runs/${encodeURIComponent(id)}`, { headers: LOCAL_HEADERS }), { params: Promise.resolve({ id }) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('GET /api/runs/:id by short id', () => {
  it('answers the record of the run an id or a unique prefix names', async () => {
    expect(await get(C)).toMatchObject({ status: 200, body: { id: C, flow: 'triage', input: { ticket: 'c' } } });
    expect(await get('c0ffee11')).toMatchObject({ status: 200, body: { id: C } });
    expect(await get('C0FFEE1')).toMatchObject({ status: 200, body: { id: C } });
  });

  it('lists the runs an ambiguous prefix names, newest first, with a 409', async () => {
    expect(await get('c0ffee00')).toEqual({
      status: 409,
      body: {
        error: `"c0ffee00" names 2 runs (by the start of their id or of their short id); give more of it`,
        code: 'E_AMBIGUOUS_RUN_ID',
        more: false,
        matches: [
          { id: B, flow: 'long-answer', status: 'failed', kind: 'flow', startedAt: Date.UTC(2026, 0, 1, 10) },
          { id: A, flow: 'triage', status: 'succeeded', kind: 'flow', startedAt: Date.UTC(2026, 0, 1, 9) },
        ],
      },
    });
  });

  it('is a 404 for a prefix of no run, or one too short to look up', async () => {
    expect(await get('deadbeef')).toEqual({ status: 404, body: { error: 'no run with id deadbeef', code: 'E_RUN' } });
    expect((await get('c0f')).status).toBe(404);
  });

  it('names runs the same way in the detail and notes routes', async () => {
    const call = async (route: 'detail' | 'notes', id: string) => {
      const mod = route === 'detail' ? await import('@/app/api/runs/[id]/detail/route') : await import('@/app/api/runs/[id]/notes/route');
      const res = await mod.GET(new NextRequest(`http://localhost/api/runs/${id}/${route}`, { headers: LOCAL_HEADERS }), { params: Promise.resolve({ id }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await call('detail', 'c0ffee11')).toMatchObject({ status: 200, body: { id: C, kind: 'flow', nodes: [] } });
    expect(await call('notes', 'c0ffee11')).toEqual({ status: 200, body: { notes: [], older: null } });
    expect(await call('notes', 'c0ffee00')).toMatchObject({ status: 409, body: { code: 'E_AMBIGUOUS_RUN_ID' } });
    expect(await call('detail', 'deadbeef')).toEqual({ status: 404, body: { error: 'no run with id deadbeef', code: 'E_RUN' } });
  });
});
