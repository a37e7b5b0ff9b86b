// The PostgreSQL migrations (drizzle/pg, generated from db/schema-pg.ts) apply to a real, empty
// PostgreSQL and build exactly the tables, columns, keys and indexes the schema describes; a row
// goes in and comes back through drizzle with the types the app reads (DESIGN: Storage).
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '../../db/schema-pg';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { shapeOf, tablesOf } from '../helpers/schema-shape';
import { closePg, openPg } from '../../db/pg';

const MIGRATIONS = fileURLToPath(new URL('../../drizzle/pg', import.meta.url));
const tables = [...tablesOf(schema, 'pg').values()].map(shapeOf);

/** indexes made by hand-written migration SQL, per table */
const HAND_WRITTEN_INDEXES: Record<string, string[]> = { search_docs: ['search_docs_tsv_idx'] };
/** columns made by hand-written migration SQL, per table, with their type (db/search-index.ts describes body_tsv) */
const HAND_WRITTEN_COLUMNS: Record<string, Record<string, string>> = { search_docs: { body_tsv: 'tsvector' } };

let database: TestDatabase | undefined;
let pool: pg.Pool;
let db: NodePgDatabase<typeof schema>;

beforeAll(async () => {
  database = await testDatabase();
  if (database.startupMs !== null) console.log(`private PostgreSQL cluster started in ${database.startupMs} ms`);
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  db = drizzle(pool, { schema });
  await migrate(db, { migrationsFolder: MIGRATIONS });
}, 90_000);

afterAll(async () => {
  await pool?.end();
  await database?.stop();
});

async function rows<T>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(text, values)).rows as T[];
}

describe('drizzle/pg migrations on a real PostgreSQL', () => {
  it('create every table of db/schema-pg.ts and no other', async () => {
    const found = await rows<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    expect(found.map((r) => r.table_name).sort()).toEqual(tables.map((t) => t.name).sort());
  });

  it.each(tables.map((t) => [t.name, t] as const))('%s has every column with its type, nullability and default', async (name, table) => {
    const found = await rows<{ column_name: string; data_type: string; is_nullable: string; column_default: string | null; is_identity: string }>(
      `SELECT column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
      [name],
    );
    const handWritten = HAND_WRITTEN_COLUMNS[name] ?? {};
    for (const [column, type] of Object.entries(handWritten)) expect(found.find((c) => c.column_name === column)?.data_type, column).toBe(type);
    expect(found.map((c) => c.column_name).filter((c) => !(c in handWritten))).toEqual(table.columns.map((c) => c.name));
    for (const column of table.columns) {
      const live = found.find((c) => c.column_name === column.name)!;
      expect([column.name, live.data_type]).toEqual([column.name, column.sqlType]);
      expect([column.name, live.is_nullable]).toEqual([column.name, column.notNull ? 'NO' : 'YES']);
      expect([column.name, live.is_identity]).toEqual([column.name, column.generated ? 'YES' : 'NO']);
      const liveDefault = live.column_default === null ? undefined : live.column_default.replace(/::\w+$/, '').replace(/^'(.*)'$/, '$1');
      expect([column.name, liveDefault]).toEqual([column.name, column.default === undefined ? undefined : String(column.default)]);
    }
  });

  it.each(tables.map((t) => [t.name, t] as const))('%s has its primary key, foreign keys and indexes', async (name, table) => {
    const indexes = await rows<{ name: string; columns: string[]; primary: boolean; unique: boolean; where: string | null }>(
      `SELECT i.relname AS name, ix.indisprimary AS primary, ix.indisunique AS unique,
              pg_get_expr(ix.indpred, ix.indrelid) AS where,
              array(SELECT coalesce(a.attname::text, pg_get_indexdef(ix.indexrelid, k.ord::int, true)) FROM unnest(ix.indkey) WITH ORDINALITY k(n, ord)
                    LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.n ORDER BY k.ord)::text[] AS columns
       FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace s ON s.oid = t.relnamespace
       WHERE s.nspname = 'public' AND t.relname = $1`,
      [name],
    );
    const pk = indexes.find((i) => i.primary);
    const expectedPk = table.primaryKey ?? table.columns.filter((c) => c.primary).map((c) => c.name);
    expect(pk?.columns).toEqual(expectedPk);

    // the full-text index is hand-written SQL (an expression index drizzle's schema does not describe)
    const handWritten = HAND_WRITTEN_INDEXES[name] ?? [];
    for (const ix of handWritten) expect(indexes.map((i) => i.name)).toContain(ix);
    const secondary = indexes.filter((i) => !i.primary && !handWritten.includes(i.name)).sort((a, b) => a.name.localeCompare(b.name));
    const expected = [...table.indexes].sort((a, b) => a.name.localeCompare(b.name));
    expect(secondary.map((i) => [i.name, i.columns, i.unique, i.where !== null])).toEqual(expected.map((i) => [i.name, i.columns, i.unique, i.where !== null]));
    // the partial conditions mention their column (PostgreSQL rewrites the text: `action = ANY (ARRAY[…])`)
    for (const ix of expected.filter((i) => i.where)) {
      expect(secondary.find((i) => i.name === ix.name)!.where).toContain(ix.columns[0]);
    }

    const fks = await rows<{ columns: string[]; table: string; foreign_columns: string[]; on_delete: string }>(
      `SELECT array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.ord)::text[] AS columns,
              f.relname AS table,
              array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.ord)::text[] AS foreign_columns,
              c.confdeltype AS on_delete
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
       JOIN pg_namespace s ON s.oid = t.relnamespace
       WHERE c.contype = 'f' AND s.nspname = 'public' AND t.relname = $1`,
      [name],
    );
    const deleteCode: Record<string, string> = { cascade: 'c', 'no action': 'a', restrict: 'r', 'set null': 'n', 'set default': 'd' };
    expect(fks.map((f) => JSON.stringify([f.columns, f.table, f.foreign_columns, f.on_delete])).sort()).toEqual(
      table.foreignKeys.map((f) => JSON.stringify([f.columns, f.table, f.foreignColumns, deleteCode[f.onDelete ?? 'no action']])).sort(),
    );
  });

  it('applying them again changes nothing', async () => {
    const before = await rows<{ n: string }>(`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`);
    await migrate(db, { migrationsFolder: MIGRATIONS });
    expect(await rows<{ n: string }>(`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)).toEqual(before);
  });

  it('round trip: a run, a node, an attempt and a try go in and come back with the app’s types', async () => {
    const startedAt = Date.UTC(2030, 0, 2, 3, 4, 5, 678); // past 2^31: bigint read as a number
    const request = [
      { role: 'user', content: 'Answer: ‘é’ 🚀' },
      { z: 1, a: 2 },
    ];
    await db.insert(schema.runs).values({
      id: 'run_1',
      project: 'p',
      flow: 'triage',
      status: 'running',
      input: { ticket: 'charged twice' },
      startedAt,
      leaseExpiresAt: startedAt + 20_000,
    });
    await db.insert(schema.nodeRuns).values({ id: 'node_1', runId: 'run_1', nodeId: 'classify', agent: 'classifier', turn: 1, status: 'running' });
    await db.insert(schema.attempts).values({
      id: 'att_1',
      nodeRunId: 'node_1',
      runId: 'run_1',
      seq: 1,
      model: 'openrouter:openai/gpt-oss-20b',
      chainIndex: 0,
      answerNo: 1,
      request,
      usageUnknown: true,
      costUsd: 0.000123,
      inputTokens: 3_000_000_000,
      startedAt,
    });
    const [tryRow] = await db
      .insert(schema.transportTries)
      .values({ attemptId: 'att_1', tryNo: 1, status: 429, error: 'rate_limited', retryAfterMs: 253402300799000, startedAt, finishedAt: startedAt + 5 })
      .returning();
    expect(typeof tryRow.id).toBe('number');

    const run = await db.query.runs.findFirst({ where: eq(schema.runs.id, 'run_1') });
    expect(run).toMatchObject({
      id: 'run_1',
      status: 'running',
      input: { ticket: 'charged twice' },
      startedAt,
      leaseExpiresAt: startedAt + 20_000,
      turns: 0,
      costUsd: 0,
      fence: 0,
      finishedAt: null,
    });
    expect(typeof run!.startedAt).toBe('number');

    const [attempt] = await db.select().from(schema.attempts).where(eq(schema.attempts.id, 'att_1'));
    expect(attempt).toMatchObject({ request, usageUnknown: true, discarded: false, costUsd: 0.000123, inputTokens: 3_000_000_000, outcome: null, startedAt });
    // json, not jsonb: the request's text is kept as written, key order included
    const [raw] = await rows<{ request: string }>(`SELECT request::text AS request FROM attempts WHERE id = 'att_1'`);
    expect(raw.request).toBe(JSON.stringify(request));

    const [tryBack] = await db.select().from(schema.transportTries).where(eq(schema.transportTries.id, tryRow.id));
    expect(tryBack).toMatchObject({ status: 429, retryAfterMs: 253402300799000, waitedMs: 0 });

    // deleting the run cascades to its nodes, attempts and tries
    await db.delete(schema.runs).where(eq(schema.runs.id, 'run_1'));
    expect(await db.select().from(schema.attempts)).toEqual([]);
    expect(await db.select().from(schema.transportTries)).toEqual([]);
  });
});

describe('a pooled connection the server ends while it is checked out', () => {
  it('rejects the query in flight and raises no unhandled error; the pool serves the next query', async () => {
    const db = await openPg(database!.url);
    const errors: unknown[] = [];
    const onUncaught = (err: unknown) => errors.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const client = await db.pool.connect();
      const ended = new Promise((r) => client.once('end', r));
      const {
        rows: [{ pid }],
      } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const sleeping = client.query('SELECT pg_sleep(5)').then(
        () => null,
        (err: Error) => err,
      );
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      const failure = await sleeping;
      expect((failure as { code?: string } | null)?.code).toBe('57P01');
      // the client has seen its connection end (not a fixed sleep, which a busy machine outlasts): the pool drops it when it comes back
      await ended;
      client.release();
      expect(errors).toEqual([]);
      expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await closePg(database!.url);
    }
  });
});
