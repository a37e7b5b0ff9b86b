// What `aqven db status` and `aqven db migrate` read (DESIGN: CLI, Storage): the schema version a
// database has against the migrations this aqven ships, its runs by status, the job queue's depth
// and its oldest queued run (PostgreSQL; the queue_wait alert reads it too) and the workers seen lately. The database is opened as it is — never migrated, never
// swept, a SQLite file read-only — so the answer describes the database, not what opening it did.
// Our tables are read through `db.t`; the tables of drizzle's migrator, of SQLite's catalogue and of
// graphile-worker are not in our schema and are described here, read-only, per dialect.
import Database from 'better-sqlite3';
import { and, count, desc, eq, gte, isNotNull, isNull, lt, notInArray, or, sql } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { bigint, integer as pgInteger, pgSchema, text as pgText, timestamp } from 'drizzle-orm/pg-core';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { migrationsFolder } from './migrations-folder';
import { displayUrl, isPostgresUrl, pgReason } from './pg';
import * as schema from './schema';
import * as pgTables from './schema-pg';
import { LIVE_RUN_STATUSES, type Db, type Orm, type PgDb, type SqliteDb, type Tables } from './types';

// ---- tables that are not ours -------------------------------------------------------------

/** SQLite's catalogue: which tables a file has. */
const sqliteMaster = sqliteTable('sqlite_master', { type: text('type'), name: text('name') });
/** drizzle's record of applied migrations (SQLite: in the main schema); created_at is the journal's `when` */
const sqliteMigrations = sqliteTable('__drizzle_migrations', { id: integer('id'), hash: text('hash'), createdAt: integer('created_at') });

const pgCatalog = pgSchema('information_schema').table('tables', { tableSchema: pgText('table_schema'), tableName: pgText('table_name') });
/** drizzle's record of applied migrations (PostgreSQL: schema `drizzle`) */
const pgMigrations = pgSchema('drizzle').table('__drizzle_migrations', {
  id: pgInteger('id'),
  hash: pgText('hash'),
  createdAt: bigint('created_at', { mode: 'number' }),
});

/** graphile-worker's schema: its default, or GRAPHILE_WORKER_SCHEMA as graphile-worker itself reads it */
export function queueSchemaName(env: Record<string, string | undefined> = process.env): string {
  return env.GRAPHILE_WORKER_SCHEMA || 'graphile_worker';
}

/** graphile-worker 0.17's tables (node_modules/graphile-worker/sql/000011.sql, 000013 renamed them `_private_*`). */
function queueTables(name: string) {
  const s = pgSchema(name);
  return {
    jobs: s.table('_private_jobs', {
      id: bigint('id', { mode: 'number' }),
      /** a run's job is keyed by the run's id (db/queue-jobs.ts) */
      key: pgText('key'),
      runAt: timestamp('run_at', { withTimezone: true }),
      attempts: pgInteger('attempts'),
      maxAttempts: pgInteger('max_attempts'),
      lockedAt: timestamp('locked_at', { withTimezone: true }),
    }),
    migrations: s.table('migrations', { id: pgInteger('id') }),
  };
}

// ---- opening a database as it is ------------------------------------------------------------

/** A database opened for reading what it holds; `close()` ends this handle only. */
export interface Inspected {
  db: Db;
  close(): Promise<void>;
}

/** The SQLite file at `path`, read-only (never created, migrated, swept or written). Throws when it is missing. */
export function openSqliteReadOnly(path: string): SqliteDb {
  const abs = resolve(path);
  const conn = new Database(abs, { readonly: true, fileMustExist: true });
  conn.pragma('busy_timeout = 5000');
  return { dialect: 'sqlite', name: abs, q: drizzleSqlite(conn, { schema }), t: schema, $client: conn };
}

/** The PostgreSQL database at `url`, not migrated: a small pool of its own. */
export function connectPgAsIs(url: string): PgDb {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined); // an idle client's error: the next query reports it
  const orm = drizzlePg(pool, { schema: pgTables });
  // typed as the SQLite schema, like every query of db/ (db/pg.ts)
  return { dialect: 'pg', name: displayUrl(url), url, pool, q: orm as unknown as Orm, t: pgTables as unknown as Tables };
}

/**
 * The database `target` names (a SQLite file or a postgres:// URL) as it is, or null when the SQLite
 * file does not exist yet. A PostgreSQL server that cannot be reached throws at the first query.
 */
export function inspectDatabase(target: string): Inspected | null {
  if (isPostgresUrl(target)) {
    const db = connectPgAsIs(target.trim());
    return { db, close: () => db.pool.end() };
  }
  if (target === ':memory:' || !existsSync(target)) return null;
  const db = openSqliteReadOnly(target);
  return {
    db,
    close: async () => {
      db.$client.close();
    },
  };
}

const pgOrm = (db: PgDb): NodePgDatabase => drizzlePg(db.pool);

/** Whether `schemaName.table` exists (PostgreSQL) or `table` does (SQLite). */
export async function hasTable(db: Db, table: string, schemaName = 'public'): Promise<boolean> {
  if (db.dialect === 'sqlite') {
    const rows = await db.q
      .select({ name: sqliteMaster.name })
      .from(sqliteMaster)
      .where(and(eq(sqliteMaster.type, 'table'), eq(sqliteMaster.name, table)));
    return rows.length > 0;
  }
  const rows = await pgOrm(db)
    .select({ name: pgCatalog.tableName })
    .from(pgCatalog)
    .where(and(eq(pgCatalog.tableSchema, schemaName), eq(pgCatalog.tableName, table)));
  return rows.length > 0;
}

// ---- schema version -------------------------------------------------------------------------

export interface JournalEntry {
  tag: string;
  /** drizzle records this as the migration's created_at */
  when: number;
}

/** The migrations this aqven ships for `dialect`, oldest first (drizzle/meta/_journal.json, drizzle/pg/meta/_journal.json). */
export function journalOf(dialect: 'sqlite' | 'pg'): JournalEntry[] {
  const file = join(migrationsFolder(dialect), 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(file, 'utf8')) as { entries: { tag: string; when: number }[] };
  return journal.entries.map((e) => ({ tag: e.tag, when: e.when })).sort((a, b) => a.when - b.when);
}

export interface SchemaVersion {
  /** migrations the database records as applied */
  applied: number;
  /** tag of the newest applied migration; null when none, or when this aqven does not know it */
  latest: string | null;
  /** migrations this aqven ships, and the newest of them */
  known: number;
  newest: string | null;
  /** shipped migrations the database has not applied yet (drizzle applies those newer than its newest) */
  behind: number;
  /** applied migrations newer than any this aqven ships: the database was migrated by a newer aqven */
  ahead: number;
}

/** The schema version of `db` against the migrations of this aqven (drizzle's `__drizzle_migrations`). */
export async function schemaVersion(db: Db): Promise<SchemaVersion> {
  const journal = journalOf(db.dialect);
  let applied: number[] = [];
  if (db.dialect === 'sqlite') {
    if (await hasTable(db, '__drizzle_migrations')) {
      applied = (await db.q.select({ at: sqliteMigrations.createdAt }).from(sqliteMigrations)).map((r) => Number(r.at));
    }
  } else if (await hasTable(db, '__drizzle_migrations', 'drizzle')) {
    applied = (await pgOrm(db).select({ at: pgMigrations.createdAt }).from(pgMigrations)).map((r) => Number(r.at));
  }
  const last = applied.length ? Math.max(...applied) : -Infinity;
  const newestKnown = journal.at(-1);
  return {
    applied: applied.length,
    latest: journal.find((e) => e.when === last)?.tag ?? null,
    known: journal.length,
    newest: newestKnown?.tag ?? null,
    behind: journal.filter((e) => e.when > last).length,
    ahead: applied.filter((at) => at > (newestKnown?.when ?? -Infinity)).length,
  };
}

/** "up to date", "2 behind", "ahead (…)" or "not migrated": the version in a few words. */
export function describeVersion(v: SchemaVersion): string {
  if (v.ahead > 0) return `ahead: ${v.ahead} migration${v.ahead === 1 ? '' : 's'} newer than this aqven knows (migrated by a newer aqven)`;
  if (v.applied === 0) return 'not migrated';
  return v.behind === 0 ? 'up to date' : `${v.behind} behind`;
}

/** graphile-worker's schema version: its newest applied migration, or null when its schema is not installed. */
export async function queueSchemaVersion(db: Db, env: Record<string, string | undefined> = process.env): Promise<number | null> {
  if (db.dialect !== 'pg') return null;
  const name = queueSchemaName(env);
  if (!(await hasTable(db, 'migrations', name))) return null;
  const { migrations } = queueTables(name);
  const [row] = await pgOrm(db).select({ id: migrations.id }).from(migrations).orderBy(desc(migrations.id)).limit(1);
  return row?.id ?? 0;
}

// ---- runs, queue, workers -------------------------------------------------------------------

export interface RunCounts {
  total: number;
  byStatus: Record<string, number>;
}

export async function runCounts(db: Db): Promise<RunCounts> {
  const { runs } = db.t;
  const rows = await db.q.select({ status: runs.status, n: count() }).from(runs).groupBy(runs.status).orderBy(runs.status);
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.status] = Number(r.n);
  return { total: rows.reduce((n, r) => n + Number(r.n), 0), byStatus };
}

export interface QueueDepth {
  /** jobs no worker holds, with attempts left (due now or scheduled later) */
  waiting: number;
  /** jobs a live worker holds: locked, and their run being claimed or running under a lease not yet expired */
  running: number;
  /**
   * jobs still locked by a worker that stopped: their run has ended (another worker took it over and
   * finished it) or its lease expired (a worker takes it over within seconds); graphile-worker
   * unlocks such a job only after 4 hours, and a queued run's stuck job is given again sooner
   */
  left: number;
  /** jobs that used up their attempts */
  failed: number;
}

/** graphile-worker's jobs by state; null when there is no queue (SQLite, or its schema not installed). */
export async function queueDepth(db: Db, env: Record<string, string | undefined> = process.env, now = Date.now()): Promise<QueueDepth | null> {
  if (db.dialect !== 'pg') return null;
  const name = queueSchemaName(env);
  if (!(await hasTable(db, '_private_jobs', name))) return null;
  const { jobs } = queueTables(name);
  const r = pgTables.runs;
  // a locked job whose run ended, or whose run's lease expired: its worker is gone
  const left = and(isNotNull(jobs.lockedAt), or(notInArray(r.status, LIVE_RUN_STATUSES), and(eq(r.status, 'running'), lt(r.leaseExpiresAt, now))));
  const [row] = await pgOrm(db)
    .select({
      waiting: sql<number>`count(*) filter (where ${jobs.lockedAt} is null and ${jobs.attempts} < ${jobs.maxAttempts})`.mapWith(Number),
      locked: sql<number>`count(*) filter (where ${jobs.lockedAt} is not null)`.mapWith(Number),
      left: sql<number>`count(*) filter (where ${left})`.mapWith(Number),
      failed: sql<number>`count(*) filter (where ${jobs.lockedAt} is null and ${jobs.attempts} >= ${jobs.maxAttempts})`.mapWith(Number),
    })
    .from(jobs)
    .leftJoin(r, eq(r.id, jobs.key));
  const locked = row?.locked ?? 0;
  const leftBehind = row?.left ?? 0;
  return { waiting: row?.waiting ?? 0, running: locked - leftBehind, left: leftBehind, failed: row?.failed ?? 0 };
}

/** The queued run that has waited longest (its id and when it was queued); null when none waits (or SQLite mode: nothing is queued). */
export async function oldestQueuedRun(db: Db): Promise<{ id: string; queuedAt: number } | null> {
  const { runs: r } = db.t;
  const [row] = await db.q
    .select({ id: r.id, queuedAt: r.queuedAt })
    .from(r)
    .where(and(eq(r.status, 'queued'), isNotNull(r.queuedAt)))
    .orderBy(r.queuedAt)
    .limit(1);
  return row ? { id: row.id, queuedAt: Number(row.queuedAt) } : null;
}

/** how recent a worker's heartbeat must be for `aqven db status` to list it */
export const WORKER_SEEN_MS = 60_000;

export interface SeenWorker {
  id: string;
  host: string;
  pid: number;
  concurrency: number;
  running: number;
  startedAt: number;
  seenAt: number;
  /** ms between the last heartbeat and `now` */
  seenAgoMs: number;
}

/** Workers not stopped whose last heartbeat is at most `withinMs` before `now`, most recent first. */
export async function recentWorkers(db: Db, now: number, withinMs = WORKER_SEEN_MS): Promise<SeenWorker[]> {
  const { workers: w } = db.t;
  const rows = await db.q
    .select()
    .from(w)
    .where(and(gte(w.seenAt, now - withinMs), isNull(w.stoppedAt)))
    .orderBy(desc(w.seenAt), w.id);
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: r.pid,
    concurrency: r.concurrency,
    running: r.running,
    startedAt: r.startedAt,
    seenAt: r.seenAt,
    seenAgoMs: Math.max(0, now - r.seenAt),
  }));
}

/** The queue as a scrape of /metrics reads it (DESIGN: Observability, "Metrics"); null in SQLite mode, where nothing is queued. */
export interface QueueGauges {
  depth: QueueDepth | null;
  /** ms; null when no run is queued */
  oldestQueuedAt: number | null;
  /** workers whose heartbeat is at most WORKER_SEEN_MS old and that have not stopped */
  liveWorkers: number;
}

export async function queueGauges(db: Db, now: number, env: Record<string, string | undefined> = process.env): Promise<QueueGauges | null> {
  if (db.dialect !== 'pg') return null;
  return { depth: await queueDepth(db, env, now), oldestQueuedAt: (await oldestQueuedRun(db))?.queuedAt ?? null, liveWorkers: (await recentWorkers(db, now)).length };
}

// ---- everything `aqven db status` shows -----------------------------------------------------

export interface DatabaseStatus {
  dialect: 'sqlite' | 'pg';
  /** the SQLite file's absolute path, or the URL without its password */
  target: string;
  /** false: the SQLite file does not exist yet (the first run or `aqven db migrate` creates it) */
  exists: boolean;
  schema: SchemaVersion & { state: string };
  /** null when the tables are not there yet */
  runs: RunCounts | null;
  /** graphile-worker's jobs; null: no queue (SQLite, or not installed) */
  queue: QueueDepth | null;
  workers: SeenWorker[];
}

/** What `target` holds, read as it is (see inspectDatabase). */
export async function databaseStatus(target: string, now = Date.now(), env: Record<string, string | undefined> = process.env): Promise<DatabaseStatus> {
  const pgTarget = isPostgresUrl(target);
  const opened = inspectDatabase(target);
  if (!opened) {
    const journal = journalOf('sqlite');
    const schemaV: SchemaVersion = { applied: 0, latest: null, known: journal.length, newest: journal.at(-1)?.tag ?? null, behind: journal.length, ahead: 0 };
    return {
      dialect: 'sqlite',
      target: target === ':memory:' ? target : resolve(target),
      exists: false,
      schema: { ...schemaV, state: 'no database yet' },
      runs: null,
      queue: null,
      workers: [],
    };
  }
  const { db } = opened;
  try {
    const version = await schemaVersion(db);
    // a table a migration not yet applied would add is simply not counted
    const ifThere = async <T>(table: string, read: () => Promise<T>): Promise<T | null> => ((await hasTable(db, table)) ? read() : null);
    return {
      dialect: pgTarget ? 'pg' : 'sqlite',
      target: db.name,
      exists: true,
      schema: { ...version, state: describeVersion(version) },
      runs: await ifThere('runs', () => runCounts(db)),
      queue: await queueDepth(db, env, now),
      workers: (await ifThere('workers', () => recentWorkers(db, now))) ?? [],
    };
  } finally {
    await opened.close();
  }
}

// ---- reaching the server --------------------------------------------------------------------

/** The PostgreSQL server of a URL cannot be reached or refuses us (down, wrong host, password, database). */
export class DatabaseUnreachableError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnreachableError';
  }
}

/** Connects once to `url` and disconnects: throws DatabaseUnreachableError when that fails. */
export async function reachPg(url: string, timeoutMs = 10_000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new DatabaseUnreachableError(`cannot connect to the PostgreSQL database ${displayUrl(url)}: ${pgReason(err)}`, (err as { code?: string }).code, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}
