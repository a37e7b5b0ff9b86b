// One SQLite connection per database file per process: WAL, a busy timeout, migrations applied
// on first use, and runs whose lease expired (their process died) marked `interrupted` (DESIGN:
// Storage). A database this process creates is private: its folder 0700, its files 0600.
import Database from 'better-sqlite3';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCheckpointer, type Checkpointer } from './checkpointer';
import { INTERRUPTED_ATTEMPT_ERROR, INTERRUPTED_NODE_ERROR } from './interrupted-error';
import { expiredLeases, leaseExpired, leaseKeeper, READ_SWEEP_MS } from './run-lease';
import { closeCutOffStreams, flushRunStore } from './run-store';
import * as schema from './schema';
import { attempts, nodeRuns, runs } from './schema';
import { guardStorage } from './storage-error';
import type { Db } from './types';

export type { Db };

const cache: Map<string, Db> = ((globalThis as { __aqvenDbs?: Map<string, Db> }).__aqvenDbs ??= new Map());
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

function migrationsFolder(): string {
  const candidates = [process.env.AQVEN_MIGRATIONS, process.env.AQVEN_ROOT && join(process.env.AQVEN_ROOT, 'drizzle')];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), '..', 'drizzle'));
  } catch {
    // bundled by Next: import.meta.url is not a file URL; fall back to the working directory
  }
  candidates.push(join(process.cwd(), 'drizzle'));
  const found = candidates.find((c): c is string => !!c && existsSync(join(c, 'meta', '_journal.json')));
  if (!found) throw new Error('AQVEN migrations folder not found (set AQVEN_ROOT to the AQVEN checkout)');
  return found;
}

/**
 * The sweep (DESIGN: Storage, leases): running runs whose lease expired before `now` — their
 * owner died or froze — become `interrupted`, except this process's own live runs. Each is
 * closed by a compare-and-set on its fence and expiry (bumping the fence), so a run renewed or
 * closed meanwhile is left alone and a late write of the old owner is refused. Returns how many.
 */
export function markInterrupted(db: Db, now = Date.now()): number {
  const dead = expiredLeases(db, now, leaseKeeper(db).heldRunIds()).map((r) => ({ id: r.runId, fence: r.fence }));
  if (dead.length === 0) return 0;
  const P = sql.placeholder;
  const node = INTERRUPTED_NODE_ERROR;
  const attempt = INTERRUPTED_ATTEMPT_ERROR;
  const upd = db
    .update(runs)
    .set({ status: 'interrupted', finishedAt: now, fence: sql`${runs.fence} + 1` })
    .where(and(eq(runs.id, P('runId')), eq(runs.fence, P('fence')), eq(runs.status, 'running'), leaseExpired()))
    .prepare();
  const updNodes = db
    .update(nodeRuns)
    .set({ status: 'failed', errorCode: node.code, errorMessage: node.message, hint: node.hint, finishedAt: now })
    .where(and(eq(nodeRuns.runId, P('runId')), inArray(nodeRuns.status, ['running', 'pending'])))
    .prepare();
  // an attempt cut off by the crash never got an outcome; it is closed, and says why
  const updAttempts = db
    .update(attempts)
    .set({ errorKind: attempt.kind, errorMessage: attempt.message, finishedAt: now })
    .where(and(eq(attempts.runId, P('runId')), isNull(attempts.outcome), isNull(attempts.finishedAt)))
    .prepare();
  let swept = 0;
  db.$client.transaction(() => {
    for (const r of dead) {
      if (upd.run({ runId: r.id, fence: r.fence, now }).changes === 0) continue; // renewed, finished or taken meanwhile
      swept++;
      updNodes.run({ runId: r.id });
      closeCutOffStreams(db, r.id); // discarded; its streamed text joined, redacted and capped
      updAttempts.run({ runId: r.id });
    }
  })();
  return swept;
}

/** The sweep of expired leases; a name for what markInterrupted does since runs have leases. */
export const sweepExpiredRuns = markInterrupted;

const lastSweep = new WeakMap<Db, number>();

/**
 * The sweep before a read of the run history (the dashboard's list and detail), at most every
 * READ_SWEEP_MS: a dead run shows as interrupted wherever it is looked at. Best effort — a
 * database this process cannot write is still read.
 */
export function sweepBeforeRead(db: Db, now = Date.now()): void {
  if (now - (lastSweep.get(db) ?? -Infinity) < READ_SWEEP_MS) return;
  lastSweep.set(db, now);
  try {
    markInterrupted(db, now);
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

export function openDb(path: string): Db {
  const abs = path === ':memory:' ? path : resolve(path);
  const hit = cache.get(abs);
  if (hit) return hit;
  const folder = migrationsFolder();
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
  const db = drizzle(sqlite, { schema }) as Db;
  sweepBeforeRead(db); // runs of dead processes become interrupted (best effort: a read-only copy is still read)
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

/** Writes what is queued, stops the checkpoint worker, checkpoints and closes the connection. */
export async function closeDb(path: string): Promise<void> {
  const abs = path === ':memory:' ? path : resolve(path);
  const db = cache.get(abs);
  if (!db) return;
  cache.delete(abs);
  flushRunStore(db);
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
