// The dashboard in PostgreSQL mode (DESIGN: The dashboard; Storage, "Workers and the queue"):
// `POST /api/runs` queues the run and answers its id at once — bad input is a 400 naming the field,
// never a queued job — and the run page's Cancel button cancels a run only while it is queued,
// re-checked on the server.
import { NextRequest } from 'next/server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { saveEnv } from '../helpers/saved-env';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
let t: TestDb;

beforeAll(async () => {
  t = await openTestDb('pg');
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  process.env.AQVEN_DATABASE_URL = t.target;
}, 90_000);

afterAll(async () => {
  const { serverSession } = await import('@/lib/server/session');
  await (await serverSession()).close();
  await t?.close();
  restoreEnv();
});

const post = async (body: unknown) => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new NextRequest('http://localhost/api/runs', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...LOCAL_HEADERS } }),
  );
  return { status: res.status, body: (await res.json()) as { id?: string; error?: string; field?: string } };
};
const cancel = async (runId: string | null) => {
  const { cancelRunAction } = await import('@/lib/actions/cancel-run');
  const fd = new FormData();
  if (runId !== null) fd.set('runId', runId);
  return cancelRunAction({ status: 'idle' }, fd);
};
const row = async (id: string) => (await t.db.q.select().from(t.db.t.runs).where(eq(t.db.t.runs.id, id)))[0];

describe('POST /api/runs and the Cancel button in PostgreSQL mode', () => {
  it('queues a run and answers its id at once; bad input is a 400 naming the field, with nothing queued', async () => {
    const bad = await post({ flow: 'triage', input: { ticket: 3 } });
    expect(bad).toMatchObject({ status: 400, body: { field: 'input.ticket' } });
    expect(await post({ flow: 'nope', input: {} })).toMatchObject({ status: 404 });
    expect(await t.db.q.select().from(t.db.t.runs)).toHaveLength(0);

    const ok = await post({ flow: 'triage', input: { ticket: 'My invoice is wrong' } });
    expect(ok.status).toBe(202);
    const r = (await row(ok.body.id!))!;
    expect(r).toMatchObject({ status: 'queued', flow: 'triage', owner: null, fence: 0 });
    // the session's snapshot: the one the dashboard pushed as its first
    expect(r.snapshotId).toBeGreaterThan(0);
    const jobs = await (t.db.dialect === 'pg' ? t.db.pool.query('select key from graphile_worker._private_jobs where key = $1', [r.id]) : null);
    expect(jobs?.rows).toEqual([{ key: r.id }]);
  });

  it('cancels a queued run once; a run no longer queued is refused with its status', async () => {
    const { body } = await post({ flow: 'triage', input: { ticket: 'cancel me' } });
    const id = body.id!;
    expect(await cancel(id)).toEqual({ status: 'cancelled', runId: id });
    expect((await row(id))!.status).toBe('cancelled');
    expect(await cancel(id)).toEqual({ status: 'error', code: 'E_NOT_QUEUED', message: 'the run is cancelled, not queued: not cancelled' });
    expect(await cancel('no-such-run')).toEqual({ status: 'error', code: 'E_RUN', message: 'no run with id no-such-run' });
    expect(await cancel(null)).toMatchObject({ status: 'error', code: 'E_RUN' });
  });
});
