// One SQLite connection per database file per process: WAL, a busy timeout, migrations applied
// on first use, and runs orphaned by a dead process marked `interrupted` (DESIGN: Storage).
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCheckpointer, type Checkpointer } from './checkpointer';
import { INTERRUPTED_ATTEMPT_ERROR, INTERRUPTED_NODE_ERROR } from './interrupted-error';
import { flushRunStore } from './run-store';
import * as schema from './schema';
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs left `running` by a process that no longer exists become `interrupted`. */
export function markInterrupted(db: Db, now = Date.now()): number {
  const rows = db.$client.prepare(`SELECT id, pid FROM runs WHERE status = 'running'`).all() as { id: string; pid: number | null }[];
  const dead = rows.filter((r) => r.pid == null || (r.pid !== process.pid && !isAlive(r.pid)));
  const upd = db.$client.prepare(`UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ? AND status = 'running'`);
  const updNodes = db.$client.prepare(
    `UPDATE node_runs SET status = 'failed', error_code = ?, error_message = ?, hint = ?, finished_at = ? WHERE run_id = ? AND status IN ('running','pending')`,
  );
  // an attempt cut off by the crash never got an outcome; it is closed, and says why
  const updAttempts = db.$client.prepare(
    `UPDATE attempts SET error_kind = ?, error_message = ?, finished_at = ? WHERE run_id = ? AND outcome IS NULL AND finished_at IS NULL`,
  );
  const node = INTERRUPTED_NODE_ERROR;
  const attempt = INTERRUPTED_ATTEMPT_ERROR;
  db.$client.transaction(() => {
    for (const r of dead) {
      upd.run(now, r.id);
      updNodes.run(node.code, node.message, node.hint, now, r.id);
      updAttempts.run(attempt.kind, attempt.message, now, r.id);
    }
  })();
  return dead.length;
}

export function openDb(path: string): Db {
  const abs = path === ':memory:' ? path : resolve(path);
  const hit = cache.get(abs);
  if (hit) return hit;
  if (abs !== ':memory:') mkdirSync(dirname(abs), { recursive: true });
  const sqlite = new Database(abs);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // deleted or overwritten text (a raw stream later redacted) must not linger in free pages
  sqlite.pragma('secure_delete = ON');
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: migrationsFolder() });
  markInterrupted(db);
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
  db.$client.pragma('wal_checkpoint(TRUNCATE)');
  db.$client.close();
}
