// `aqven db copy --from FILE` (DESIGN: Storage, "Moving a SQLite history into PostgreSQL"): every
// table of a SQLite history, row for row and ids included, into the PostgreSQL database. The file is
// opened read-only and read in one snapshot, so a process still writing it cannot hand us an attempt
// whose node was read before it existed. Rows are read through drizzle over db/schema.ts (JSON
// parsed, flags as booleans) and written through `db.q.insert(db.t.X)`, so each value lands as the
// PostgreSQL schema types it; a row already there (same key) is left as it is — copying twice
// copies nothing twice.
import Database from 'better-sqlite3';
import { asc, count, getTableColumns, getTableName, gt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { migrationsFolder } from './migrations-folder';
import { hasTable, openSqliteReadOnly, schemaVersion } from './status-queries';
import { transaction } from './tx';
import type { Db, PgDb, SqliteDb, Tables } from './types';
import { backfillFailureSignatures } from './backfill';

/** Every table, parents before children (foreign keys: runs ← node_runs ← attempts ← tries, chunks). */
export const COPY_ORDER = [
  'runs',
  'nodeRuns',
  'attempts',
  'transportTries',
  'streamChunks',
  'rateLimitPauses',
  'policyRevisions',
  'projectSnapshots',
  'workers',
  'notes',
  'searchDocs',
  'agentDaily',
  'nodeDaily',
  'failureDaily',
  'modelLimits',
  'replayBatches',
] as const satisfies readonly (keyof Tables)[];
type TableKey = (typeof COPY_ORDER)[number];

/** Tables whose id PostgreSQL generates (identity): its sequence must move past the ids copied in. */
const IDENTITY: ReadonlySet<TableKey> = new Set(['transportTries', 'policyRevisions', 'projectSnapshots', 'notes', 'searchDocs', 'modelLimits']);

/** rows per INSERT (attempts have 28 columns: 14,000 parameters, well under PostgreSQL's 65,535) */
export const COPY_BATCH_ROWS = 500;
/** an INSERT also ends once its rows hold about this much text (a history of long streamed answers) */
const COPY_BATCH_CHARS = 8 * 1024 * 1024;

/** The source cannot be copied (missing, not an AQVEN database, written by a newer aqven): nothing was written. */
export class CopySourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopySourceError';
  }
}

/** A batch PostgreSQL refused: the rows copied before it stay; nothing of the batch was written. */
export class CopyBatchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CopyBatchError';
  }
}

export interface TableCopied {
  /** the table's SQL name, e.g. node_runs */
  table: string;
  /** rows in the source */
  total: number;
  /** rows inserted now */
  copied: number;
  /** rows whose key PostgreSQL already had (left as they were) */
  existing: number;
}

export interface CopyProgress {
  table: string;
  done: number;
  total: number;
}

export interface CopyOptions {
  batchRows?: number;
  onProgress?: (p: CopyProgress) => void;
  /** after each table */
  onTable?: (t: TableCopied) => void;
  /** the source was at an older schema and is read from a migrated temporary copy */
  onNote?: (text: string) => void;
}

type Row = Record<string, unknown>;

/** A row's key in messages: its id, or its composite key. */
function keyOf(key: TableKey, row: Row): string {
  if (key === 'streamChunks') return `${String(row.attemptId)}#${String(row.seq)}`;
  if (key === 'rateLimitPauses') return String(row.model);
  if (key === 'agentDaily') return [row.agent, row.day, row.model, row.outcome, row.cause, row.action].map(String).join('/');
  if (key === 'failureDaily') return `${String(row.sig)}/${String(row.day)}`;
  if (key === 'nodeDaily') return [row.agent, row.day, row.status].map(String).join('/');
  return String(row.id);
}

/** PostgreSQL's text cannot hold NUL (SQLite's can): name the row instead of failing on the whole batch. */
function assertNoNul(table: SQLiteTable, key: TableKey, row: Row): void {
  for (const [field, value] of Object.entries(row)) {
    if (typeof value === 'string' && value.includes('\u0000')) {
      const column = getTableColumns(table)[field]?.name ?? field;
      throw new CopyBatchError(`${getTableName(table)} ${keyOf(key, row)}: ${column} holds a NUL character, which PostgreSQL text cannot store; nothing of its batch was copied`);
    }
  }
}

/** About how much text a row sends (JSON columns as they will be serialised). */
function sizeOf(row: Row): number {
  let n = 0;
  for (const v of Object.values(row)) n += typeof v === 'string' ? v.length : v !== null && typeof v === 'object' ? JSON.stringify(v).length : 8;
  return n;
}

/** `rows` cut into INSERTs of at most `maxRows` rows and about COPY_BATCH_CHARS of text. */
function batches(rows: Row[], maxRows: number): Row[][] {
  const out: Row[][] = [];
  let cur: Row[] = [];
  let chars = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (cur.length > 0 && (cur.length >= maxRows || chars + size > COPY_BATCH_CHARS)) {
      out.push(cur);
      cur = [];
      chars = 0;
    }
    cur.push(row);
    chars += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * Opens `path` for copying: read-only, checked to be an AQVEN database this aqven can read. A file at
 * an older schema is copied with SQLite's backup API into a private temporary file and migrated
 * there (the file itself is never written); `dispose()` closes it and deletes the temporary copy.
 */
async function openSource(path: string, onNote?: (text: string) => void): Promise<{ src: SqliteDb; dispose(): void }> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new CopySourceError(`${abs}: no such file`);
  if (!statSync(abs).isFile()) throw new CopySourceError(`${abs} is not a file`);
  const notAqven = `${abs} is not an AQVEN database (no runs and migrations tables)`;
  let src: SqliteDb;
  try {
    src = openSqliteReadOnly(abs);
  } catch (err) {
    throw new CopySourceError(`cannot open ${abs} read-only: ${(err as Error).message}`);
  }
  try {
    if (!(await hasTable(src, 'runs')) || !(await hasTable(src, '__drizzle_migrations'))) throw new CopySourceError(notAqven);
    const version = await schemaVersion(src);
    if (version.ahead > 0) {
      throw new CopySourceError(
        `${abs} was migrated by a newer aqven (${version.ahead} migration${version.ahead === 1 ? '' : 's'} this one does not know); copy it with that version`,
      );
    }
    if (version.behind === 0) return { src, dispose: () => src.$client.close() };

    // an older schema: its rows lack columns db/schema.ts reads — migrate a private copy, not the file
    const dir = mkdtempSync(join(tmpdir(), 'aqven-copy-')); // 0700: the history is the user's
    const tmp = join(dir, 'source.db');
    try {
      await src.$client.backup(tmp);
      const conn = new Database(tmp);
      migrate(drizzle(conn), { migrationsFolder: migrationsFolder('sqlite') });
      conn.close();
      onNote?.(`${abs} is at migration ${version.latest ?? '(none)'}, ${version.behind} behind: read from a migrated temporary copy (the file is not changed)`);
      const migrated = openSqliteReadOnly(tmp);
      src.$client.close();
      return {
        src: migrated,
        dispose: () => {
          migrated.$client.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  } catch (err) {
    if (src.$client.open) src.$client.close();
    if (err instanceof CopySourceError) throw err;
    // SQLITE_NOTADB and the like: a file that is not a SQLite database at all
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) throw new CopySourceError(`${notAqven.replace(/ \(.*\)$/, '')} (${code})`);
    throw err;
  }
}

/** Moves the identity sequence of `table.id` past every id the table now holds (never backwards). */
async function moveSequencePast(db: PgDb, table: SQLiteTable): Promise<void> {
  const id = getTableColumns(table).id!;
  const seq = sql`pg_get_serial_sequence(${getTableName(table)}, ${id.name})`;
  // setval(NULL) on an empty table does nothing; greatest() skips a sequence never used (NULL)
  await db.q.select({ v: sql`setval(${seq}, greatest(max(${id}), pg_sequence_last_value(${seq}::regclass)))` }).from(table);
}

/** Copies one table of `src` into `db`; resolves with its counts. */
async function copyTable(src: SqliteDb, db: PgDb, key: TableKey, opts: CopyOptions): Promise<TableCopied> {
  const from = src.t[key] as unknown as SQLiteTable;
  const to = db.t[key] as unknown as SQLiteTable;
  const table = getTableName(from);
  const [{ n: total } = { n: 0 }] = await src.q.select({ n: count() }).from(from);
  const result: TableCopied = { table, total, copied: 0, existing: 0 };
  const pageRows = opts.batchRows ?? COPY_BATCH_ROWS;
  let last = -Infinity;
  let done = 0;
  opts.onProgress?.({ table, done, total });
  for (;;) {
    // keyset paging on SQLite's rowid: every table here is a rowid table, and the read is one snapshot
    const page = await src.q
      .select({ rowid: sql<number>`rowid`, row: from })
      .from(from)
      .where(last === -Infinity ? undefined : sql`rowid > ${last}`)
      .orderBy(sql`rowid`)
      .limit(pageRows);
    if (page.length === 0) break;
    last = page[page.length - 1]!.rowid;
    const rows = page.map((p) => p.row as Row);
    for (const batch of batches(rows, pageRows)) {
      for (const row of batch) assertNoNul(from, key, row);
      let inserted: unknown[];
      try {
        inserted = await transaction(db, (q) =>
          q
            .insert(to)
            .values(batch as SQLiteTable['$inferInsert'][])
            .onConflictDoNothing()
            .returning({ one: sql`1` }),
        );
      } catch (err) {
        const first = keyOf(key, batch[0]!);
        throw new CopyBatchError(
          `${table}: PostgreSQL refused the ${batch.length} rows from ${first}: ${(err as { cause?: Error }).cause?.message ?? (err as Error).message}; the rows copied before them stay, and running the copy again continues`,
          { cause: err },
        );
      }
      result.copied += inserted.length;
      result.existing += batch.length - inserted.length;
      done += batch.length;
      opts.onProgress?.({ table, done, total });
    }
  }
  if (IDENTITY.has(key)) await moveSequencePast(db, to);
  return result;
}

/**
 * The target holds runs the file does not (another history, or runs recorded there since): the
 * file's numbered rows (transport tries, search documents, notes, revisions, snapshots, limits) and
 * its day-keyed sums would meet rows of that history under the same keys, and `ON CONFLICT DO
 * NOTHING` would drop them in silence. Refused before anything is written: the copy goes into a
 * fresh database, or one it copied the same file into before (which then gets what is new).
 */
async function refuseAnotherHistory(src: SqliteDb, db: PgDb, sourcePath: string): Promise<void> {
  const { runs } = db.t;
  const [{ n } = { n: 0 }] = await db.q.select({ n: count() }).from(runs);
  if (!Number(n)) return;
  const mine = new Set((await src.q.select({ id: src.t.runs.id }).from(src.t.runs)).map((r) => r.id));
  let others = 0;
  let example: string | null = null;
  for (let after = ''; ;) {
    const page = await db.q.select({ id: runs.id }).from(runs).where(gt(runs.id, after)).orderBy(asc(runs.id)).limit(5000);
    for (const r of page) {
      if (mine.has(r.id)) continue;
      others++;
      example ??= r.id;
    }
    if (page.length < 5000) break;
    after = page[page.length - 1]!.id;
  }
  if (others) {
    throw new CopySourceError(
      `${db.name} already holds ${others.toLocaleString('en-US')} run${others === 1 ? '' : 's'} that ${resolve(sourcePath)} does not (e.g. ${example}): copying into it would drop rows of the file whose numbered ids and daily sums meet that history's; copy into a fresh database (aqven db migrate on an empty one), or into the one this file was copied into before`,
    );
  }
}

/**
 * Copies every table of the SQLite history at `sourcePath` into the PostgreSQL database `db`
 * (migrated), in COPY_ORDER, one transaction per batch. Resolves with each table's counts.
 * Throws CopySourceError before writing anything when the file cannot be copied.
 */
export async function copySqliteHistory(sourcePath: string, db: Db, opts: CopyOptions = {}): Promise<TableCopied[]> {
  if (db.dialect !== 'pg') throw new CopySourceError(`the copy goes into PostgreSQL, not into ${db.name}`);
  const { src, dispose } = await openSource(sourcePath, opts.onNote);
  const c = src.$client;
  try {
    c.exec('BEGIN'); // one read snapshot for every table: a writer of the file cannot tear the history
    await refuseAnotherHistory(src, db, sourcePath);
    const out: TableCopied[] = [];
    for (const key of COPY_ORDER) {
      const t = await copyTable(src, db, key, opts);
      opts.onTable?.(t);
      out.push(t);
    }
    // a history this version never opened has failed rows without a failure signature, and the
    // target's own backfill ran (when it was migrated) before they came: stamp and sum them now
    await backfillFailureSignatures(db, { force: true });
    return out;
  } finally {
    if (c.inTransaction) c.exec('COMMIT');
    dispose();
  }
}
