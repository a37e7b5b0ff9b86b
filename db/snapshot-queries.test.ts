// Project snapshots on both dialects: an unchanged push stores nothing, pushes at once take turns,
// a change based on an older snapshot is refused, and the files come back as pushed.
import { describe, expect, it } from 'vitest';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '../test/helpers/dialects';
import { projectFilesHash } from '@/lib/project/project-files';
import { getSnapshot, latestSnapshot, latestSnapshotId, listSnapshots, pushSnapshot, SnapshotMovedError } from './snapshot-queries';
import type { Db } from './types';

const PROJECT = 'apiVersion: "aqven/v1"\r\nkind: "Project"\r\nname: "crlf"\r\n';

describe.each(DIALECTS)('project snapshots on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });

  it('is empty at first', async () => {
    expect(await latestSnapshot(db)).toBeNull();
    expect(await latestSnapshotId(db)).toBeNull();
    expect(await listSnapshots(db)).toEqual([]);
  });

  it('stores a push, returns its files as pushed, and stores an unchanged push no more', async () => {
    // a path the project never has is refused before anything is stored
    await expect(pushSnapshot(db, { files: { 'aqven.yaml': 'p', '../x.yaml': 'x' } })).rejects.toThrow(/refusing the file "\.\.\/x\.yaml" of the files to push/);
    const files = { 'aqven.yaml': PROJECT, 'agents/echo.yaml': 'description: "日本語 — ☃"\n' };
    const first = await pushSnapshot(db, { files, author: 'cli:ana', note: 'push', createdAt: 1_000 });
    expect(first).toEqual({ id: expect.any(Number), created: true, hash: projectFilesHash(files) });
    const again = await pushSnapshot(db, { files: { 'agents/echo.yaml': files['agents/echo.yaml'], 'aqven.yaml': files['aqven.yaml'] }, author: 'cli:bo', note: 'push' });
    expect(again).toEqual({ id: first.id, created: false, hash: first.hash });
    const latest = await latestSnapshot(db);
    expect(latest).toEqual({ id: first.id, hash: first.hash, author: 'cli:ana', note: 'push', createdAt: 1_000, files });
    expect(await getSnapshot(db, first.id)).toEqual(latest);
    expect(await getSnapshot(db, first.id + 1000)).toBeNull();
  });

  it('lists newest first without the files; a change on top of an older snapshot is refused', async () => {
    const base = (await latestSnapshotId(db))!;
    const next = await pushSnapshot(db, { files: { 'aqven.yaml': 'v2' }, author: 'dashboard', note: 'policy x', basedOn: base, createdAt: 2_000 });
    expect(next.created).toBe(true);
    await expect(pushSnapshot(db, { files: { 'aqven.yaml': 'v3' }, basedOn: base })).rejects.toThrow(SnapshotMovedError);
    expect(await latestSnapshotId(db)).toBe(next.id);
    const listed = await listSnapshots(db, 5);
    expect(listed.map((s) => [s.id, s.author, s.note, s.createdAt])).toEqual([
      [next.id, 'dashboard', 'policy x', 2_000],
      [base, 'cli:ana', 'push', 1_000],
    ]);
    expect(listed[0]).not.toHaveProperty('files');
    expect(await listSnapshots(db, 1)).toHaveLength(1);
  });

  it('pushes at once take turns: the same files are stored once', async () => {
    const other = dialect === 'pg' ? otherProcess(t) : { db, close: async () => undefined };
    try {
      const files = { 'aqven.yaml': 'contended' };
      const pushes = await Promise.all(Array.from({ length: 8 }, (_, i) => pushSnapshot(i % 2 ? other.db : db, { files })));
      expect(pushes.filter((p) => p.created)).toHaveLength(1);
      expect(new Set(pushes.map((p) => p.id)).size).toBe(1);
    } finally {
      await other.close();
    }
  });
});
