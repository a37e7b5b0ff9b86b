// The run mode, decided once (lib/flow/run-mode.ts): from the environment for a command that opens no
// session, from the session's database when one opens. In-process (SQLite): a started run runs in
// this process, nothing can be cancelled, the background duty sweeps dead runs. Queue (PostgreSQL):
// a started run is a queued row with its job, and a queued run can be cancelled.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/db/client';
import { RunInputError } from '@/lib/flow/run-flow';
import { NOTHING_QUEUED, openQueueMode, runModeKind } from '@/lib/flow/run-mode';
import { openSession, type Session } from '@/lib/flow/session';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { runEnded } from '../helpers/run-ended';
import { copyShowcase } from '../helpers/showcase';

const INPUT = { ticket: 'My invoice is wrong' };

describe('runModeKind: the environment names the mode', () => {
  it('queue only for a postgres:// URL; no URL or a SQLite file runs in-process', () => {
    expect(runModeKind({})).toBe('in-process');
    expect(runModeKind({ AQVEN_DATABASE_URL: '  ' })).toBe('in-process');
    expect(runModeKind({ AQVEN_DATABASE_URL: '/tmp/runs.db' })).toBe('in-process');
    expect(runModeKind({ AQVEN_DATABASE_URL: 'postgres://u:p@localhost/aqven' })).toBe('queue');
    expect(runModeKind({ AQVEN_DATABASE_URL: 'postgresql://u:p@localhost/aqven' })).toBe('queue');
  });

  it('a command that opens no session opens no queue where nothing is queued (SQLite mode)', async () => {
    expect(await openQueueMode({})).toBeNull();
    expect(await openQueueMode({ AQVEN_DATABASE_URL: '/tmp/runs.db' })).toBeNull();
  });
});

describe('in-process mode (SQLite)', () => {
  let s: Session;
  beforeAll(async () => {
    s = await openSession(copyShowcase(), { simulate: true, env: {} });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    if (s) await closeDb(s.target);
  });

  it('is chosen by the session; a start runs the flow here and answers its id once the row is committed', async () => {
    expect(s.mode).toMatchObject({ kind: 'in-process', canQueue: false });
    const started = await s.mode.start(s, { flow: 'triage', input: INPUT, startedBy: 'ana' });
    if (!started.ok) throw new Error(started.error);
    const { runs } = s.db.t;
    expect((await s.db.q.select({ id: runs.id }).from(runs).where(eq(runs.id, started.id))).length).toBe(1);
    expect(await runEnded(s.db, started.id)).toMatchObject({ startedBy: 'ana' });
  });

  it("refuses the caller's mistake by throwing, before anything is stored", async () => {
    await expect(s.mode.start(s, { flow: 'triage', input: { nope: 1 }, startedBy: null })).rejects.toBeInstanceOf(RunInputError);
  });

  it('queues nothing, so cancels nothing; its background duty can be stopped', async () => {
    expect(await s.mode.cancel('any-run')).toEqual({ cancelled: false, status: null, inProcess: true });
    expect(NOTHING_QUEUED).toMatch(/^nothing is queued in SQLite mode/);
    const stop = s.mode.background();
    expect(typeof stop).toBe('function');
    stop();
  });
});

describe('queue mode (PostgreSQL)', () => {
  let tdb: TestDatabase;
  let s: Session;
  beforeAll(async () => {
    tdb = await testDatabase();
    s = await openSession(copyShowcase(), { env: { AQVEN_DATABASE_URL: tdb.url } });
  }, 90_000);
  afterAll(async () => {
    await s?.close();
    if (tdb) await closeDb(tdb.url);
    await tdb?.stop();
  });

  it('is chosen by the session; a start is a queued run, which cancel cancels once', async () => {
    expect(s.mode).toMatchObject({ kind: 'queue', canQueue: true });
    const started = await s.mode.start(s, { flow: 'triage', input: INPUT, startedBy: 'token:ci' });
    if (!started.ok) throw new Error(started.error);
    const { runs } = s.db.t;
    const [row] = await s.db.q.select({ status: runs.status, startedBy: runs.startedBy }).from(runs).where(eq(runs.id, started.id));
    expect(row).toEqual({ status: 'queued', startedBy: 'token:ci' });
    expect(await s.mode.cancel(started.id)).toEqual({ cancelled: true });
    expect(await s.mode.cancel(started.id)).toEqual({ cancelled: false, status: 'cancelled' });
    expect(await s.mode.cancel('no-such-run')).toEqual({ cancelled: false, status: null });
  });

  it("a command that opens no session (aqven cancel) gets the queue mode of the environment's database, decided once", async () => {
    const started = await s.mode.start(s, { flow: 'triage', input: INPUT, startedBy: 'cli:ana' });
    if (!started.ok) throw new Error(started.error);
    const queue = await openQueueMode({ AQVEN_DATABASE_URL: tdb.url });
    if (!queue) throw new Error('no queue mode on PostgreSQL');
    try {
      expect(queue.mode).toMatchObject({ kind: 'queue', canQueue: true });
      expect(await queue.mode.cancel(started.id)).toEqual({ cancelled: true });
    } finally {
      await queue.close();
    }
  });

  it('leaves dead runs to the workers: its background duty does nothing to stop', () => {
    const stop = s.mode.background();
    expect(stop()).toBeUndefined();
  });
});
