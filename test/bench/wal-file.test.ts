// bench/wal-file.ts: the WAL's frames read back from a real SQLite file, and the b-trees they wrote.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { framesByTree, pageOwners, walFrames } from '@/bench/wal-file';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function walDb() {
  const dir = mkdtempSync(join(tmpdir(), 'aqven-wal-file-'));
  dirs.push(dir);
  const path = join(dir, 'a.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v)');
  db.pragma('wal_checkpoint(TRUNCATE)'); // the schema in the file, the WAL empty
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  return { db, path, insert, wal: () => walFrames(readFileSync(`${path}-wal`)) };
}

describe('walFrames', () => {
  it('reads one commit frame per write transaction, and the b-trees each frame wrote', () => {
    const { db, insert, wal } = walDb();
    for (let tx = 0; tx < 3; tx++) db.transaction(() => ['a', 'b'].forEach((v) => insert.run(`${v}${tx}`)))();
    const { pageSize, frames } = wal();
    expect(pageSize).toBe(4096);
    expect(frames.filter((f) => f.commit)).toHaveLength(3);
    expect(frames.at(-1)!.commit).toBe(true);
    // each transaction wrote the table's one leaf and the index's one leaf
    expect(framesByTree(frames, pageOwners(db))).toEqual([
      ['t', 3],
      ['t_v', 3],
    ]);
    db.close();
  });

  it('stops at frames left over from before the WAL was started over', () => {
    const { db, insert, wal } = walDb();
    for (let tx = 0; tx < 4; tx++) insert.run(`x${tx}`);
    expect(wal().frames).toHaveLength(8);
    db.pragma('wal_checkpoint(RESTART)'); // the next writer starts the WAL over from its beginning, with new salts
    insert.run('y');
    // the file still holds the older frames after the new ones; only the new transaction's count
    expect(readFileSync(`${db.name}-wal`).length).toBeGreaterThan(32 + 2 * (24 + 4096));
    expect(wal().frames).toEqual([
      { page: expect.any(Number), commit: false },
      { page: expect.any(Number), commit: true },
    ]);
    db.close();
  });

  it('reads no frame from a WAL shorter than its header', () => {
    expect(walFrames(Buffer.alloc(10))).toEqual({ pageSize: 0, frames: [] });
  });
});
