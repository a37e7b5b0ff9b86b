// The WAL stays bounded under a write load that never pauses: without the RESTART checkpoint a
// PASSIVE checkpoint never finds the whole WAL copied, and SQLite keeps appending to it.
import { mkdtempSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startCheckpointer } from './checkpointer';

const PAGE = 4096;

async function writeSteadily(restartFrames: number): Promise<number> {
  const path = join(mkdtempSync(join(tmpdir(), 'aqven-ckpt-')), 'steady.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  const cp = startCheckpointer(path, createRequire(import.meta.url).resolve('better-sqlite3'), () => {}, { restartFrames });
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const pad = 'x'.repeat(3000);
  // ~3,600 commits of a page or more each, never idle for long: a PASSIVE checkpoint at each of the
  // worker's ticks copies what it can while the next commits keep coming
  for (let i = 0; i < 3600; i++) {
    insert.run(pad);
    if (i % 10 === 0) await new Promise((r) => setTimeout(r, 8));
  }
  const size = statSync(`${path}-wal`).size;
  await cp!.stop();
  db.close();
  return size;
}

describe('background checkpoints', () => {
  it('start the WAL over once it passes its frame limit, so a steady writer does not grow it without bound', async () => {
    const bounded = await writeSteadily(300);
    // the limit plus what is written between two ticks of the worker (250 ms): 1,090–1,250 pages on
    // a quiet machine, 2,420 at a load of 10 (the worker's ticks come late). The same load under
    // PASSIVE checkpoints alone (restartFrames past any WAL) leaves 11,000 pages: the WAL is never
    // wholly copied while commits keep coming, so every commit appends to it
    expect(bounded).toBeLessThan(5000 * PAGE);
  }, 60_000);
});
