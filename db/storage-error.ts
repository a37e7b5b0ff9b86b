// When the run database cannot be written (DESIGN: Storage, CLI exit 3): a read-only file or
// folder, a full disk or a file size limit, a lock held too long. One clear sentence naming the
// path and the fix instead of a SqliteError stack; the CLI exits 3 ("cannot record") on it.
import { readFileSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/** The database at `path` cannot be opened or written; `message` says why and what to do. */
export class StorageError extends Error {
  constructor(
    message: string,
    readonly path: string,
    /** SQLite's or the file system's code, e.g. SQLITE_READONLY, EACCES */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

/**
 * AQVEN_DATABASE_URL names no database AQVEN can open: a URL of another scheme (mysql://…), or a
 * postgres:// URL node-postgres cannot read. Bad configuration: the CLI exits 2 on it.
 */
export class DatabaseUrlError extends Error {
  constructor(why: string) {
    super(`AQVEN_DATABASE_URL ${why}; it must be a PostgreSQL URL (postgres://user:password@host:5432/database, or postgresql://…) or the path of a SQLite file`);
    this.name = 'DatabaseUrlError';
  }
}

const READ_ONLY = new Set(['EACCES', 'EPERM', 'EROFS']);
const FULL = new Set(['ENOSPC', 'EFBIG', 'EDQUOT']);

/** The process's file size limit in bytes (`ulimit -f`), when one is set (Linux). */
function fileSizeLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max file size'));
    const soft = line?.slice('Max file size'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}

function freeBytes(path: string): number | null {
  try {
    const s = statfsSync(dirname(path));
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** Why a write failed for want of room: the file size limit, a full disk, or either. */
function noRoom(path: string): string {
  const limit = fileSizeLimit();
  if (limit !== null) return `the file size limit (ulimit -f: ${limit} bytes) or the free space of the disk was reached; raise the limit (ulimit -f unlimited) or free space`;
  const free = freeBytes(path);
  if (free !== null && free < 64 * 1024 * 1024) return `the disk is full (${Math.round(free / 1024)} KiB free); free some space`;
  return 'the disk may be full or failing; check free space (df) and the disk';
}

const ELSEWHERE = 'or set database: in aqven.yaml to a writable path';

/** The sentence for `code`; `failed` is the file or folder the file system named (mkdir, open), if any. */
function explain(code: string, path: string, failed: string | undefined): string | null {
  const dir = dirname(path);
  if (READ_ONLY.has(code) && failed && failed !== path) {
    return `cannot create the run database ${path}: ${failed} is not writable (${code}); make it writable (chmod u+w "${failed}") ${ELSEWHERE}`;
  }
  if (code.startsWith('SQLITE_READONLY') || READ_ONLY.has(code)) {
    return `the run database ${path} is read-only (${code}); make the file and its folder writable (chmod u+w "${path}" "${dir}") ${ELSEWHERE}`;
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'ENOENT' || code === 'ENOTDIR') {
    return `cannot open the run database ${path} (${code}): its folder ${dir} must exist and be writable (chmod u+w "${dir}"), ${ELSEWHERE}`;
  }
  if (code === 'SQLITE_FULL' || FULL.has(code)) return `cannot write the run database ${path} (${code}): ${noRoom(path)}, then run again`;
  if (code.startsWith('SQLITE_IOERR')) return `cannot write the run database ${path}: disk I/O error (${code}); ${noRoom(path)}, then run again`;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return `the run database ${path} stayed locked by another process for more than 5 s (${code}); try again, or stop the process holding it`;
  }
  if (code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH')) return `access to the run database ${path} was denied (${code}); check its owner and mode`;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return `the run database ${path} is damaged or not an AQVEN database (${code}); move it aside and run again to start a fresh one`;
  }
  return null;
}

/** `err` as a StorageError about the database at `path`, or null when it is no storage failure. */
export function asStorageError(err: unknown, path: string): StorageError | null {
  if (err instanceof StorageError) return err;
  // drizzle wraps SQLite's error in its own (cause)
  for (let e = err as { code?: unknown; path?: unknown; cause?: unknown } | null, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code !== 'string') continue;
    const message = explain(e.code, path, typeof e.path === 'string' ? e.path : undefined);
    return message ? new StorageError(message, path, e.code, { cause: err }) : null;
  }
  return null;
}

/** Runs `f`; a storage failure it throws becomes a StorageError about `path`. */
export function guardStorage<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw asStorageError(err, path) ?? err;
  }
}
