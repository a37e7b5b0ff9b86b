// One SQLite connection per database file per process: WAL, a busy timeout, migrations applied
// on first use, and runs whose lease expired (their process died) marked `interrupted` (DESIGN:
// Storage). A database this process creates is private: its folder 0700, its files 0600.
import Database from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { backfillOnOpen } from './backfill';
import { migrationsFolder } from './migrations-folder';
import { startCheckpointer, type Checkpointer } from './checkpointer';
import { stopClusterGate } from './cluster-gate';
import { INTERRUPTED_NODE_ERROR } from './interrupted-error';
import { closePg, isPostgresUrl, openedPg, openPg, unreadablePostgresUrl } from './pg';
import { cutOffAt, expiredBefore, expiredLeases, lastSeenAlive, leaseKeeper, READ_SWEEP_MS } from './run-lease';
import { closeCutOffAttempts, failCutOffNodes, flushRunStore } from './run-store';
import * as schema from './schema';
import { DatabaseUrlError, guardStorage } from './storage-error';
import { endHeldModelLimits } from './limits-queries';
import { transaction } from './tx';
import type { Db, PgDb, SqliteDb } from './types';

export type { Db, SqliteDb };

const cache: Map<string, SqliteDb> = ((globalThis as { __aqvenDbs?: Map<string, SqliteDb> }).__aqvenDbs ??= new Map());
const checkpointers = new Map<string, Checkpointer>();

function driverPath(): string {
  try {
    const p: unknown = createRequire(import.meta.url).resolve('better-sqlite3');
    // under a bundler resolve() may answer a module id instead of a path
    if (typeof p === 'string' && isAbsolute(p)) return p;
  } catch {
    // fall through
  }
  return 'better-sqlite3'; // the worker resolves it from the working directory
}

/**
 * The sweep (DESIGN: Storage, leases): running runs whose lease expired before `now` — their
 * owner died or froze — become `interrupted`, except this process's own live runs. Each is
 * closed by a compare-and-set on its fence and expiry (bumping the fence), so a run renewed or
 * closed meanwhile is left alone and a late write of the old owner is refused. Resolves with how
 * many. SQLite mode only: on PostgreSQL a worker takes a dead run over and resumes it instead.
 */
export async function markInterrupted(db: Db, now = Date.now()): Promise<number> {
  const dead = await expiredLeases(db, now, leaseKeeper(db).heldRunIds());
  if (dead.length === 0) return 0;
  const { runs } = db.t;
  const node = INTERRUPTED_NODE_ERROR;
  return transaction(db, async (q) => {
    let swept = 0;
    for (const r of dead) {
      // the run ended when its owner was last seen alive, not when this sweep found it
      const seen = await lastSeenAlive(q, db.t, r.runId, r.lastSeenAt);
      const done = await q
        .update(runs)
        .set({ status: 'interrupted', finishedAt: cutOffAt(seen, now), fence: sql`${runs.fence} + 1` })
        .where(and(eq(runs.id, r.runId), eq(runs.fence, r.fence), eq(runs.status, 'running'), expiredBefore(runs, now)))
        .returning({ id: runs.id });
      if (done.length === 0) continue; // renewed, finished or taken meanwhile
      swept++;
      // failed as a node failed by its own run is: signed, searchable, counted (flow runs)
      await failCutOffNodes(db, q, r.runId, node, seen, now);
      await closeCutOffAttempts(db, q, r.runId, seen, now); // discarded; streamed text joined, redacted and capped
      await endHeldModelLimits(db, q, r.runId, now); // a limits run's rows: partial, free to resume
    }
    return swept;
  });
}

/** The sweep of expired leases; a name for what markInterrupted does since runs have leases. */
export const sweepExpiredRuns = markInterrupted;

const lastSweep = new WeakMap<Db, number>();

/**
 * The sweep before a read of the run history (the dashboard's list and detail), at most every
 * READ_SWEEP_MS: a dead run shows as interrupted wherever it is looked at. Best effort — a
 * database this process cannot write is still read. A no-op on PostgreSQL (workers take over).
 */
export async function sweepBeforeRead(db: Db, now = Date.now()): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  if (now - (lastSweep.get(db) ?? -Infinity) < READ_SWEEP_MS) return;
  lastSweep.set(db, now);
  try {
    await markInterrupted(db, now);
  } catch {
    // read-only or full: the runs are shown as stored; the writer that can will sweep them
  }
}

/** Creates the database file (and the folders missing above it) private to this user: 0600 in 0700. */
function createPrivately(abs: string): void {
  if (existsSync(abs)) return; // the user's file: its mode is theirs
  mkdirSync(dirname(abs), { recursive: true, mode: 0o700 }); // only the folders created here get 0700
  try {
    // SQLite creates the -wal and -shm files with the database file's mode
    closeSync(openSync(abs, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * AQVEN_DATABASE_URL, trimmed, or null when unset: a postgres:// URL or a SQLite file path. Any
 * other `scheme://` is refused (DatabaseUrlError), never taken for a path — `mysql://user:pw@db/x`
 * would become folders holding the password — as is a postgres:// URL node-postgres cannot read.
 * The error names the scheme only: the value may hold a password.
 */
export function databaseUrl(env: Record<string, string | undefined> = process.env): string | null {
  const value = env.AQVEN_DATABASE_URL?.trim();
  if (!value) return null;
  if (isPostgresUrl(value)) {
    const why = unreadablePostgresUrl(value);
    // node-postgres's reason ("Invalid URL", an sslrootcert file not found), never the value itself
    if (why !== null)
      throw new DatabaseUrlError(
        `is a postgres:// URL that cannot be read (${why.split(value).join('…')}; check its host, port, parameters and the %-encoding of its user and password)`,
      );
    return value;
  }
  const scheme = /^([a-z][a-z0-9+.-]+):\/\//i.exec(value)?.[1];
  if (scheme) throw new DatabaseUrlError(`is a ${scheme.toLowerCase()}:// URL`);
  return value;
}

/**
 * AQVEN_DATABASE_URL when it names a database several processes share — PostgreSQL, where runs
 * are queued for workers and the project lives in the database — else null (no URL, or a SQLite
 * file). The run mode (lib/flow/run-mode.ts) is decided from this, once.
 */
export function sharedDatabaseUrl(env: Record<string, string | undefined> = process.env): string | null {
  const url = databaseUrl(env);
  return url !== null && isPostgresUrl(url) ? url : null;
}

/** `db` as a database runs can be queued in (PostgreSQL), or null (SQLite: a run runs in the process that starts it). */
export function queueDatabase(db: Db): PgDb | null {
  return db.dialect === 'pg' ? db : null;
}

/**
 * The database a process records to (DESIGN: Storage): AQVEN_DATABASE_URL when it is set (a
 * postgres:// URL or a SQLite file; databaseUrl), else the project's SQLite file.
 */
export function databaseTarget(sqlitePath: string, env: Record<string, string | undefined> = process.env): string {
  return databaseUrl(env) ?? sqlitePath;
}

/**
 * Opens (once per process) the SQLite file or PostgreSQL URL `target`, migrated; runs of dead
 * processes swept (SQLite); failure signatures stamped on runs recorded before them (once per
 * database: db/backfill.ts).
 */
export async function openDatabase(target: string): Promise<Db> {
  if (isPostgresUrl(target)) {
    const pg = await openPg(target.trim());
    await backfillOnOpen(pg);
    return pg;
  }
  const db = openDb(target);
  await sweepBeforeRead(db);
  await backfillOnOpen(db);
  return db;
}

/** Opens the SQLite file at `path` (once per process), migrated; openDatabase also sweeps the runs of dead processes. */
export function openDb(path: string): SqliteDb {
  const abs = path === ':memory:' ? path : resolve(path);
  const hit = cache.get(abs);
  if (hit) return hit;
  const folder = migrationsFolder('sqlite');
  const sqlite = guardStorage(abs, () => {
    if (abs !== ':memory:') createPrivately(abs);
    const conn = new Database(abs);
    try {
      conn.pragma('busy_timeout = 5000');
      conn.pragma('journal_mode = WAL');
      conn.pragma('synchronous = NORMAL');
      conn.pragma('foreign_keys = ON');
      // deleted or overwritten text (a raw stream later redacted) must not linger in free pages
      conn.pragma('secure_delete = ON');
      migrate(drizzle(conn, { schema }), { migrationsFolder: folder });
    } catch (err) {
      conn.close();
      // drizzle's ROLLBACK after a failed COMMIT hides SQLite's error: SQLite rolled back by itself,
      // which it does when the disk is full or failing (an I/O error)
      if (/no transaction is active/.test(String((err as { cause?: unknown }).cause))) {
        throw Object.assign(new Error('the migrations could not be written', { cause: err }), { code: 'SQLITE_IOERR' });
      }
      throw err;
    }
    return conn;
  });
  const orm = drizzle(sqlite, { schema });
  const db: SqliteDb = { dialect: 'sqlite', name: abs, q: orm, t: schema, $client: sqlite };
  if (abs !== ':memory:') {
    // if the worker cannot run, SQLite's own auto-checkpoint takes over again
    const cp = startCheckpointer(abs, driverPath(), () => sqlite.open && sqlite.pragma('wal_autocheckpoint = 1000'));
    if (cp) {
      sqlite.pragma('wal_autocheckpoint = 0');
      checkpointers.set(abs, cp);
    }
  }
  cache.set(abs, db);
  return db;
}

/** Closes `db` as closeDb does, whichever dialect it is. */
export function closeDatabase(db: Db): Promise<void> {
  return closeDb(db.dialect === 'pg' ? db.url : db.name);
}

/** Writes what is queued, stops the checkpoint worker, checkpoints and closes the connection (or ends the PostgreSQL pool). */
export async function closeDb(path: string): Promise<void> {
  if (isPostgresUrl(path)) {
    const pg = await openedPg(path.trim())?.catch(() => null);
    if (pg) {
      await flushRunStore(pg);
      await stopClusterGate(pg);
    }
    return closePg(path.trim());
  }
  const abs = path === ':memory:' ? path : resolve(path);
  const db = cache.get(abs);
  if (!db) return;
  cache.delete(abs);
  await flushRunStore(db);
  const cp = checkpointers.get(abs);
  checkpointers.delete(abs);
  await cp?.stop();
  try {
    db.$client.pragma('wal_checkpoint(TRUNCATE)'); // leave no WAL behind
  } catch {
    // read-only or full: the WAL stays and is checkpointed by the next writer
  }
  db.$client.close();
}
