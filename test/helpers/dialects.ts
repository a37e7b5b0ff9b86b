// Both dialects of the data layer for a test file (DESIGN: Storage, "One data layer, two
// dialects"): `describe.each(DIALECTS)` and, in beforeAll, `openTestDb(dialect)` — an in-memory
// SQLite database (or a file, when the test needs one), or a fresh database in the throwaway
// PostgreSQL cluster (test/helpers/pg-cluster.ts), copied from the run's migrated template.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { closeDb, openDatabase } from '@/db/client';
import * as schema from '@/db/schema';
import * as pgSchema from '@/db/schema-pg';
import type { Db, Orm, Tables } from '@/db/types';
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
  const pg = await testDatabase({ migrated: true });
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

/**
 * A second connection to the same database, standing for another process: its own SQLite
 * connection to the file, or its own PostgreSQL pool. Close it with `close()`.
 */
export function otherProcess(t: TestDb): { db: Db; close(): Promise<void> } {
  if (t.db.dialect === 'sqlite') {
    const conn = new Database(t.target);
    conn.pragma('busy_timeout = 5000');
    const orm = drizzleSqlite(conn, { schema });
    return { db: { dialect: 'sqlite', name: t.target, q: orm, t: schema, $client: conn }, close: async () => void conn.close() };
  }
  const pool = new pg.Pool({ connectionString: t.target, max: 4 });
  // as db/pg.ts does: a connection the server ends (the test database dropped at the end of its
  // file while a client of this pool is still closing) is no uncaught 'error' event
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const orm = drizzlePg(pool, { schema: pgSchema });
  return {
    db: { dialect: 'pg', name: t.db.name, url: t.target, pool, q: orm as unknown as Orm, t: pgSchema as unknown as Tables },
    close: () => pool.end(),
  };
}

/**
 * A fresh database of `dialect` for the tests of one describe block: opened before them, closed
 * after; `opened` hears it once open (to keep the db in a variable of the block).
 */
export function withTestDb(dialect: Dialect, opened: (t: TestDb) => void): void {
  let t: TestDb | undefined;
  beforeAll(async () => {
    t = await openTestDb(dialect);
    opened(t);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });
}
