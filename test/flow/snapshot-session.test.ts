// The project in the database (DESIGN: Storage): in PostgreSQL mode a session runs the newest
// snapshot — pushed from the folder when there is none yet — and moves to a newer one when it is
// pushed; in SQLite mode the folder is the project, as always.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { closeDb } from '@/db/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '@/db/audit-queries';
import { cliAuthor, latestSnapshot, listSnapshots, pushSnapshot } from '@/db/snapshot-queries';
import { runFlow } from '@/lib/flow/run-flow';
import { currentSession, NoSnapshotError, openSession, ProjectInvalidError, refreshSession, type Session } from '@/lib/flow/session';
import { readProjectFiles } from '@/lib/project';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';

describe('a session in PostgreSQL mode', () => {
  let t: TestDb;
  let env: Record<string, string | undefined>;
  let session: Session | null = null;
  const cacheDir = join(copyShowcase(), '.cache'); // a fresh folder of the test's
  beforeAll(async () => {
    t = await openTestDb('pg');
    env = { AQVEN_DATABASE_URL: t.target };
  }, 90_000);
  afterAll(async () => {
    await session?.close();
    await t?.close();
  });

  it('without a snapshot or a folder, says to push one', async () => {
    const err = await openSession(null, { env, cacheDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoSnapshotError);
    expect((err as Error).message).toMatch(/^the database postgres:\/\/.* holds no project yet: run `aqven project push DIR` first$/);
    // a folder that is no project (a default ./showcase that is not there) is no folder to push
    await expect(openSession(join(cacheDir, 'nowhere'), { env, cacheDir })).rejects.toThrow(NoSnapshotError);
  });

  it('pushes a folder failing check not at all', async () => {
    const dir = copyShowcase();
    await writeFile(join(dir, 'agents/writer.yaml'), 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "nope"\n');
    await expect(openSession(dir, { env, cacheDir })).rejects.toThrow(ProjectInvalidError);
    expect(await latestSnapshot(t.db)).toBeNull();
  });

  it('pushes the folder first when there is no snapshot, then runs the snapshot from its private copy', async () => {
    const dir = copyShowcase();
    session = await openSession(dir, { env, cacheDir, simulate: true });
    const [first] = await listSnapshots(t.db);
    expect(first).toMatchObject({ author: cliAuthor(), note: 'first push' });
    expect(cliAuthor()).toMatch(/^cli:./);
    expect(session.snapshotId).toBe(first!.id);
    // a push like any other in the audit trail
    expect((await listAudit(t.db, { kind: 'project.pushed' })).rows.map((r) => [r.actor, r.target, r.detail])).toEqual([
      [cliAuthor(), `snapshot ${first!.id}`, { created: true, note: 'first push' }],
    ]);
    expect(session.target).toBe(t.target);
    expect(session.db).toBe(t.db);
    expect(session.project.dir.startsWith(cacheDir)).toBe(true);
    expect(session.project.name).toBe('showcase');
    expect((await latestSnapshot(t.db))!.files).toEqual(await readProjectFiles(dir));
    // edits of the folder after the push change nothing: the database holds the project
    await writeFile(join(dir, 'agents/classifier.yaml'), 'broken: [');
    expect(await currentSession(session)).toBe(session);
  });

  it('records the snapshot a run ran under', async () => {
    const s = session!;
    const rec = await runFlow({
      project: s.project,
      flow: 'triage',
      input: { ticket: 'I was charged twice' },
      providers: s.providers,
      env: s.env,
      db: s.db,
      snapshotId: s.snapshotId,
    });
    const { runs } = t.db.t;
    const [row] = await t.db.q.select({ snapshotId: runs.snapshotId }).from(runs).where(eq(runs.id, rec.id));
    expect(row!.snapshotId).toBe(s.snapshotId);
  });

  it('moves to a newer snapshot once it is pushed, and only then', async () => {
    const s = session!;
    const files = (await readProjectFiles(s.project.dir)) as Record<string, string>;
    const edited = files['agents/writer.yaml']!.replace(/retries: \d+/, 'retries: 4');
    expect(edited).not.toBe(files['agents/writer.yaml']);
    const pushed = await pushSnapshot(t.db, { files: { ...files, 'agents/writer.yaml': edited }, author: 'cli:other', note: 'push' });
    const next = await currentSession(s);
    expect(next).not.toBe(s);
    expect(next.snapshotId).toBe(pushed.id);
    expect(next.project.agents.writer!.output.retries).toBe(4);
    expect(s.project.agents.writer!.output.retries).not.toBe(4); // the old session is left as it was
    expect(next.db).toBe(s.db);
    expect(next.simulated).toBe(s.simulated); // the same simulator: providers routed to it
    expect(next.providers.openrouter!.baseUrl).toBe(s.providers.openrouter!.baseUrl);
    expect(await currentSession(next)).toBe(next);

    // in place, for the dashboard's shared session
    expect(await refreshSession(s)).toBe(true);
    expect(s.snapshotId).toBe(pushed.id);
    expect(s.project.agents.writer!.output.retries).toBe(4);
    expect(await refreshSession(s)).toBe(false);
  });

  it('a newer snapshot that fails check is refused; the session stays', async () => {
    const s = session!;
    const files = (await readProjectFiles(s.project.dir)) as Record<string, string>;
    await pushSnapshot(t.db, { files: { ...files, 'agents/writer.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "nope"\n' } });
    const err = await currentSession(s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProjectInvalidError);
    expect((err as Error).message).toMatch(/^snapshot \d+ fails aqven check with 1 error\(s\); fix the files and run `aqven project push DIR`$/);
    const before = s.snapshotId;
    await expect(refreshSession(s)).rejects.toThrow(ProjectInvalidError);
    expect(s.snapshotId).toBe(before);
  });

  it('another process opening the database runs the newest snapshot, not its folder', async () => {
    await pushSnapshot(t.db, { files: await readProjectFiles(session!.project.dir) });
    const other = await openSession(copyShowcase(), { env, cacheDir });
    try {
      expect(other.snapshotId).toBe((await latestSnapshot(t.db))!.id);
      expect(other.project.agents.writer!.output.retries).toBe(4);
      expect(await readFile(join(other.project.dir, 'agents/writer.yaml'), 'utf8')).toContain('retries: 4');
    } finally {
      await other.close();
    }
  });
});

describe('a session in SQLite mode', () => {
  it('runs the folder, with no snapshot', async () => {
    const dir = copyShowcase();
    const s = await openSession(dir, { env: {} });
    try {
      expect(s.snapshotId).toBeNull();
      expect(s.db.dialect).toBe('sqlite');
      expect(s.target).toBe(s.project.databasePath);
      expect(s.project.dir).toBe(dir);
      expect(await currentSession(s)).toBe(s);
      expect(await refreshSession(s)).toBe(false);
    } finally {
      await s.close();
      await closeDb(s.target);
    }
  });
});
