// Both dialects of the data layer for a test file (DESIGN: Storage, "One data layer, two
// dialects"): `describe.each(DIALECTS)` and, in beforeAll, `openTestDb(dialect)` — an in-memory
// SQLite database (or a file, when the test needs one), or a fresh database in the throwaway
// PostgreSQL cluster (test/helpers/pg-cluster.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDb, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { testDatabase } from './pg-cluster';

export const DIALECTS = ['sqlite', 'pg'] as const;
export type Dialect = (typeof DIALECTS)[number];

export interface TestDb {
  db: Db;
  /** the SQLite file path or the PostgreSQL URL: what AQVEN_DATABASE_URL / the project would name */
  target: string;
  close(): Promise<void>;
}

/** A fresh, migrated, empty database of `dialect` (SQLite: a file in a temp folder). */
export async function openTestDb(dialect: Dialect): Promise<TestDb> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'aqven-db-'));
    const target = join(dir, 'runs.db');
    const db = await openDatabase(target);
    return {
      db,
      target,
      async close() {
        await closeDb(target);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await testDatabase();
  const db = await openDatabase(pg.url);
  return {
    db,
    target: pg.url,
    async close() {
      await closeDb(pg.url);
      await pg.stop();
    },
  };
}
