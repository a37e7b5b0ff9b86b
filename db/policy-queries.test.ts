// Policy revisions on both dialects: numbered per agent, never sharing a number.
import { describe, expect, it } from 'vitest';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '../test/helpers/dialects';
import { listPolicyRevisions, recordPolicyRevision } from './policy-queries';
import type { Db } from './types';

describe.each(DIALECTS)('policy revisions on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });

  it('numbers revisions per agent and lists them newest first', async () => {
    await recordPolicyRevision(db, { agent: 'classifier', yaml: 'a', diff: '-x\n+a', createdAt: 1 });
    await recordPolicyRevision(db, { agent: 'writer', yaml: 'w', diff: '', createdAt: 2 });
    const r = await recordPolicyRevision(db, { agent: 'classifier', yaml: 'b', diff: '-a\n+b', createdAt: 3 });
    expect(r.revision).toBe(2);
    expect((await listPolicyRevisions(db, 'classifier')).map((x) => [x.revision, x.yaml])).toEqual([
      [2, 'b'],
      [1, 'a'],
    ]);
  });

  it('keeps who saved it and the snapshot it made; both are empty when not given', async () => {
    const r = await recordPolicyRevision(db, { agent: 'router', yaml: 'r', diff: '', author: 'cli:ana', snapshotId: 7, createdAt: 4 });
    expect(r).toMatchObject({ agent: 'router', revision: 1, author: 'cli:ana', snapshotId: 7, createdAt: 4 });
    const plain = await recordPolicyRevision(db, { agent: 'router', yaml: 's', diff: '-r\n+s' });
    expect(plain).toMatchObject({ revision: 2, author: null, snapshotId: null });
    expect((await listPolicyRevisions(db, 'router', 1)).map((x) => [x.revision, x.author])).toEqual([[2, null]]);
  });

  it('saves at once never share a number', async () => {
    // PostgreSQL: two pools, each save on its own connection. SQLite: one connection per process
    // (a second one in this thread would wait for the first's write lock, blocking it)
    const other = dialect === 'pg' ? otherProcess(t) : { db, close: async () => undefined };
    try {
      const saves = Array.from({ length: 12 }, (_, i) => recordPolicyRevision(i % 2 ? other.db : db, { agent: 'contended', yaml: `v${i}`, diff: '', createdAt: i }));
      const numbers = (await Promise.all(saves)).map((r) => r.revision).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    } finally {
      await other.close();
    }
  });
});
