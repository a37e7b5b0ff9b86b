// PostgreSQL mode (DESIGN: Storage, "One data layer, two dialects"): AQVEN_DATABASE_URL=postgres://…
// switches every store to one PostgreSQL database. A pool per URL per process; the migrations of
// drizzle/pg/ applied at open, under an advisory lock so that workers starting together migrate once.
// TLS and every other connection setting pass through the URL (`?sslmode=require`), as node-postgres
// reads them.
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { migrationsFolder } from './migrations-folder';
import * as pgSchema from './schema-pg';
import { StorageError } from './storage-error';
import type { Orm, PgDb, Tables } from './types';

/** Whether the database target is a PostgreSQL URL (else it is a SQLite file path). */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target.trim());
}

/** Why node-postgres cannot read `url` as a connection string (its own parse, which connects nothing), or null when it can. */
export function unreadablePostgresUrl(url: string): string | null {
  try {
    new pg.Client({ connectionString: url });
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The URL as it may be printed: its password replaced by `***`. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** node-postgres's reason in one line (a refused "localhost" is an AggregateError with an empty message). */
export function pgReason(err: unknown): string {
  const e = err as { message?: string; code?: string; errors?: { message?: string }[] };
  const inner = e.errors
    ?.map((x) => x.message)
    .filter(Boolean)
    .join('; ');
  const text = e.message || inner || String(err);
  return e.code && !text.includes(e.code) ? `${text} (${e.code})` : text;
}

/** connection-level failures: the server down, restarting, unreachable, or ending our connection */
const CONNECTION_LOST = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** The connection to the database failed or was lost (nothing about the query itself): a restart or an outage, worth waiting out. */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | null;
  if (typeof e?.code === 'string' && CONNECTION_LOST.has(e.code)) return true;
  if (Array.isArray(e?.errors) && e.errors.length > 0 && e.errors.every(isConnectionLoss)) return true;
  if (e?.cause !== undefined && e.cause !== err && isConnectionLoss(e.cause)) return true;
  return err instanceof Error && /^Connection terminated/.test(err.message);
}

/**
 * A failed query in one line: the driver's reason, never the SQL and its parameters (run data:
 * inputs, outputs, error text) that drizzle's "Failed query: … params: …" message carries.
 */
export function queryErrorText(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (err instanceof Error && err.message.startsWith('Failed query') && cause) return pgReason(cause);
  return err instanceof Error ? err.message : String(err);
}

/**
 * The server of `url` cannot be reached or refuses us (down, wrong host, port, password or
 * database): a StorageError, so every command says one line naming the database and exits 3.
 */
function unreachable(url: string, err: unknown): StorageError {
  const code = (err as { code?: unknown }).code;
  return new StorageError(`cannot connect to the PostgreSQL database ${displayUrl(url)}: ${pgReason(err)}`, displayUrl(url), typeof code === 'string' ? code : 'ECONNECT', {
    cause: err,
  });
}

/** One key for the migration lock, the same in every AQVEN process ("aqven" in ASCII). */
const MIGRATION_LOCK = 0x617176656e;

/** Applies drizzle/pg/'s migrations not yet applied; concurrent callers wait for one another. */
export async function migratePg(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // a failure rejects the query in flight
  // the first connection of every open: where an unreachable server shows, for every command at once
  await client.connect().catch((err: unknown) => {
    throw unreachable(url, err);
  });
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client, { schema: pgSchema }), { migrationsFolder: migrationsFolder('pg') });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await client.end();
  }
}

const cache: Map<string, Promise<PgDb>> = ((globalThis as { __aqvenPgDbs?: Map<string, Promise<PgDb>> }).__aqvenPgDbs ??= new Map());

/** pool size per process: the run store's commits, the lease keeper, reads (the gate's LISTEN connection is one more, outside the pool) */
const POOL_MAX = Number(process.env.AQVEN_PG_POOL_MAX) || 10;

/** The database at `url`, migrated, its pool shared by every caller of this process. */
export function openPg(url: string): Promise<PgDb> {
  const hit = cache.get(url);
  if (hit) return hit;
  const opened = (async (): Promise<PgDb> => {
    await migratePg(url);
    const pool = new pg.Pool({ connectionString: url, max: POOL_MAX });
    // an idle client's error (the server restarted) must not crash the process; the next query reconnects
    pool.on('error', (err) => console.error(`aqven: PostgreSQL connection lost (${displayUrl(url)}): ${err.message}`));
    // a checked-out client (a transaction's, the run store's batch) has no listener of the pool's:
    // a connection the server ends mid-use (a restart, a dropped database) would otherwise be an
    // unhandled 'error' event. The query in flight rejects with that error, and the pool drops the
    // broken client when it comes back.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const orm = drizzle(pool, { schema: pgSchema });
    // The one cast of the data layer: queries are typed against the SQLite schema and run here on
    // the PostgreSQL tables, which db/schema-dialects.test.ts proves identical column by column.
    return { dialect: 'pg', name: displayUrl(url), url, pool, q: orm as unknown as Orm, t: pgSchema as unknown as Tables };
  })();
  cache.set(url, opened);
  opened.catch(() => cache.delete(url));
  return opened;
}

/** The database of `url` if this process opened it. */
export function openedPg(url: string): Promise<PgDb> | undefined {
  return cache.get(url);
}

/** Ends the pool of `url` (after the caller flushed what it queued). */
export async function closePg(url: string): Promise<void> {
  const hit = cache.get(url);
  if (!hit) return;
  cache.delete(url);
  const db = await hit.catch(() => null);
  await db?.pool.end();
}
