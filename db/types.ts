// The types db/ hands out: the connection, and the stored facts of a run (DESIGN: Storage). They
// live apart from client.ts and queries.ts so every db module and lib/flow can share them without
// importing each other; the run record built from these facts lives in lib/flow/run-record.ts.
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type pg from 'pg';
import type { AttemptRecord, NodeErrorCode, NodePolicy } from '@/lib/engine/types';
import type * as schema from './schema';

/**
 * The query builder every query of db/ is written with, once for both dialects (DESIGN: Storage,
 * "One data layer, two dialects"): typed against db/schema.ts. A query is awaited — never `.all()`,
 * `.get()` or `.run()`, which only SQLite has — and names its tables through `db.t`, so that on
 * PostgreSQL the same builder calls run over db/schema-pg.ts's tables (proved identical, column by
 * column, by db/schema-dialects.test.ts).
 */
export type Orm = BetterSQLite3Database<typeof schema>;
export type Tables = typeof schema;

interface DbCommon {
  /** the database in messages: a file path, or a URL without its password */
  readonly name: string;
  readonly q: Orm;
  readonly t: Tables;
}

/** The embedded default: the project's SQLite file, one synchronous connection per process. */
export interface SqliteDb extends DbCommon {
  readonly dialect: 'sqlite';
  /** the connection itself, for what only SQLite has (pragmas, the hot path's prepared statements) */
  readonly $client: Database.Database;
}

/** AQVEN_DATABASE_URL=postgres://…: a pool of connections to one PostgreSQL database. */
export interface PgDb extends DbCommon {
  readonly dialect: 'pg';
  readonly pool: pg.Pool;
  /** the URL as given (with its password: never printed) */
  readonly url: string;
}

export type Db = SqliteDb | PgDb;

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted' | 'cancelled';
/** A run not over yet: queued, or running (every other status is an end). */
export const LIVE_RUN_STATUSES: RunStatus[] = ['queued', 'running'];
export type NodeStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface RunError {
  code: string;
  node: string | null;
  message: string;
  hint: string | null;
}

/** Everything stored about one run, in the order it happened (a live run keeps the same shape). */
export interface RunFacts {
  id: string;
  flow: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: RunError | null;
  turns: number;
  startedAt: number;
  finishedAt: number | null;
  nodes: NodeFacts[];
}

export interface NodeFacts {
  id: string;
  agent: string;
  turn: number;
  status: NodeStatus;
  output: unknown;
  error: { code: NodeErrorCode | string; message: string; hint: string } | null;
  policy: NodePolicy | null;
  attempts: AttemptFacts[];
  startedAt: number | null;
  finishedAt: number | null;
}

/** An attempt as stored: one cut off by a crash has no outcome, and may have no finish time. */
export type AttemptFacts = Omit<AttemptRecord, 'outcome' | 'finishedAt'> & {
  outcome: AttemptRecord['outcome'] | null;
  finishedAt: number | null;
};
