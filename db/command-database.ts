// The database a command opens itself (DESIGN: CLI; Storage, "One data layer, two dialects"): the
// operations commands (`aqven db`, `runs purge`, `user`, `token`, `project`, `cancel`) name it, reach
// it, open and migrate it through these answers, so no code outside db/ asks which database it is on.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { closeDb, openDatabase, openDb, sharedDatabaseUrl } from './client';
import { displayUrl, isPostgresUrl, migratePg, openedPg, pgReason } from './pg';
import { DatabaseUnreachableError, reachPg, type DatabaseStatus } from './status-queries';
import { asStorageError, StorageError } from './storage-error';
import type { Db, PgDb } from './types';

type Env = Record<string, string | undefined>;

/** what a command calls each kind of database */
const KIND = { pg: 'PostgreSQL', sqlite: 'SQLite' } as const satisfies Record<Db['dialect'], string>;
type Kind = (typeof KIND)[Db['dialect']];

/** How a command names the database `target` (a SQLite file or a postgres:// URL): where — the file's absolute path, or the URL without its password — and its kind. */
export function describeTarget(target: string): { where: string; kind: Kind } {
  return isPostgresUrl(target) ? { where: displayUrl(target.trim()), kind: KIND.pg } : { where: resolve(target), kind: KIND.sqlite };
}

/** Whether `target` holds a database yet: a SQLite file not created yet holds none (a server answers for itself when reached). */
export function databaseExists(target: string): boolean {
  return isPostgresUrl(target) || existsSync(target);
}

/** Reaches the server of `target` before anything else is asked of it (DatabaseUnreachableError: one line, exit 3); a SQLite file needs no reaching. */
export async function reachDatabase(target: string): Promise<void> {
  if (isPostgresUrl(target)) await reachPg(target.trim());
}

/** A database opened for one command; `close` ends only what the opening started (a pool this process already held stays open). */
export interface CommandDatabase<D extends Db = Db> {
  db: D;
  close(): Promise<void>;
}

/**
 * Opens `target` (migrated) for a command: a server is reached first, and one that refuses the
 * opening is DatabaseUnreachableError; a SQLite file's failure is its StorageError.
 */
export async function openForCommand(target: string): Promise<CommandDatabase> {
  const server = isPostgresUrl(target);
  const key = server ? target.trim() : target;
  if (server) await reachPg(key);
  // closed at the end only when this command opened it (a test's process may hold its pool open)
  const close = server && openedPg(key) !== undefined ? async () => {} : () => closeDb(key);
  try {
    return { db: await openDatabase(key), close };
  } catch (err) {
    await close().catch(() => undefined);
    if (!server) throw err;
    throw new DatabaseUnreachableError(`cannot open the PostgreSQL database: ${pgReason((err as { cause?: unknown }).cause ?? err)}`, undefined, { cause: err });
  }
}

/**
 * The shared database AQVEN_DATABASE_URL names — where runs are queued (`aqven cancel`) — opened for
 * a command as openForCommand does; null when the environment names none (SQLite mode: nothing is
 * queued).
 */
export async function openSharedForCommand(env: Env): Promise<CommandDatabase<PgDb> | null> {
  const url = sharedDatabaseUrl(env);
  if (url === null) return null;
  const opened = await openForCommand(url);
  return opened as CommandDatabase<PgDb>; // a postgres:// URL opens a PgDb
}

/** Applies the migrations of `target`: a SQLite file created and migrated; a server's tables, then the job queue's own schema (graphile-worker) in the same database. */
export async function migrateDatabase(target: string): Promise<void> {
  if (!isPostgresUrl(target)) {
    openDb(target);
    await closeDb(target);
    return;
  }
  await migratePg(target);
  const { runMigrations } = await import('graphile-worker');
  await runMigrations({ connectionString: target });
}

/**
 * A read of `target` that failed, as the one line a command says (exit 3): a SQLite file's storage
 * failure (damaged, not a database) as its StorageError, anything else — a schema we may not read —
 * as DatabaseUnreachableError naming the database.
 */
export function readFailure(target: string, err: unknown): Error {
  if (err instanceof StorageError || err instanceof DatabaseUnreachableError) return err;
  const storage = isPostgresUrl(target) ? null : asStorageError(err, resolve(target));
  if (storage) return storage;
  return new DatabaseUnreachableError(`cannot read the database ${describeTarget(target).where}: ${pgReason((err as { cause?: unknown }).cause ?? err)}`, undefined, {
    cause: err,
  });
}

/** How `aqven db status` names what it found: the database's kind, and why it has no job queue when it has none. */
export function statusWords(s: DatabaseStatus): { kind: Kind; noQueue: string } {
  const noQueue = s.dialect === 'pg' ? 'graphile-worker schema not installed: `aqven db migrate`' : 'SQLite: a run runs in the process that starts it';
  return { kind: KIND[s.dialect], noQueue };
}
