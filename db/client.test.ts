// The database files (DESIGN: Storage): created private (0600 in a 0700 folder) without touching a
// folder the user already has, and no WAL left behind once the database is idle or closed.
import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WAL_IDLE_MS } from './checkpointer';
import { closeDb, openDb } from './client';
import { runStore } from './run-store';
import { asStorageError, StorageError } from './storage-error';
import { until } from '@/test/helpers/until';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('database files', () => {
  it('a new database is 0600 (its WAL and shm too) in a 0700 folder; an existing folder keeps its mode', async () => {
    const root = mkdtempSync(join(tmpdir(), 'aqven-modes-'));
    const path = join(root, '.aqven', 'aqven.db');
    const db = openDb(path);
    await runStore(db).insertRun({ id: 'r', project: 'p', flow: 'f', input: {}, startedAt: 1 });
    expect(mode(join(root, '.aqven'))).toBe(0o700);
    expect(mode(path)).toBe(0o600);
    expect(mode(`${path}-wal`)).toBe(0o600);
    expect(mode(`${path}-shm`)).toBe(0o600);
    await closeDb(path);

    const own = join(root, 'shared');
    mkdirSync(own, { mode: 0o755 });
    const second = join(own, 'aqven.db');
    openDb(second);
    expect(mode(own)).toBe(0o755); // the user's folder: not ours to chmod
    expect(mode(second)).toBe(0o600);
    await closeDb(second);
  });

  it(`the WAL is truncated once no write came for ${WAL_IDLE_MS} ms, and removed on close`, async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'aqven-wal-')), 'aqven.db');
    const db = openDb(path);
    const s = runStore(db);
    for (let i = 0; i < 20; i++) await s.insertRun({ id: `r${i}`, project: 'p', flow: 'f', input: { pad: 'x'.repeat(4000) }, startedAt: i });
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    // (the runs' heartbeats write again every 5 s; each idle gap after them truncates it again)
    await until('the idle WAL to be truncated', () => statSync(`${path}-wal`).size === 0);
    await closeDb(path);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('storage failures become one sentence naming the path and the fix', () => {
    const ro = asStorageError(Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }), '/p/.aqven/aqven.db');
    expect(ro).toBeInstanceOf(StorageError);
    expect(ro!.message).toBe(
      'the run database /p/.aqven/aqven.db is read-only (SQLITE_READONLY); make the file and its folder writable (chmod u+w "/p/.aqven/aqven.db" "/p/.aqven") or set database: in aqven.yaml to a writable path',
    );
    const mkdir = asStorageError(Object.assign(new Error('EACCES'), { code: 'EACCES', path: '/p/.aqven' }), '/p/.aqven/aqven.db');
    expect(mkdir!.message).toMatch(/^cannot create the run database \/p\/\.aqven\/aqven\.db: \/p\/\.aqven is not writable \(EACCES\)/);
    // drizzle wraps SQLite's error
    const wrapped = asStorageError(new Error('Failed to run the query', { cause: Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }) }), '/p/a.db');
    expect(wrapped!.message).toMatch(/^cannot write the run database \/p\/a\.db: disk I\/O error \(SQLITE_IOERR_WRITE\); /);
    expect(asStorageError(new Error('no code'), '/p/a.db')).toBeNull();
    expect(asStorageError(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }), '/p/a.db')).toBeNull();
  });
});
