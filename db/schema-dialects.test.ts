// The two schema descriptions (db/schema.ts for SQLite, db/schema-pg.ts for PostgreSQL) describe the
// same tables: same names, columns (compatible types, the same JS type read, nullability, defaults,
// keys), foreign keys and indexes, partial conditions included (DESIGN: Storage). The row types
// match too (checked by tsc). A change to one file and not the other fails here.
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { bigint, pgTable, text as pgText } from 'drizzle-orm/pg-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { differences, shapeOf, tablesOf } from '../test/helpers/schema-shape';
import * as sqlite from './schema';
import * as pg from './schema-pg';

const sqliteTables = tablesOf(sqlite, 'sqlite');
const pgTables = tablesOf(pg, 'pg');

describe('SQLite and PostgreSQL schemas', () => {
  it('have the same tables', () => {
    expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys()].sort());
    expect(sqliteTables.size).toBeGreaterThanOrEqual(7);
  });

  it.each([...sqliteTables.keys()])('describe %s the same way', (name) => {
    const s = sqliteTables.get(name);
    const p = pgTables.get(name);
    expect(s && p, `${name} is missing from one schema`).toBeTruthy();
    expect(differences(shapeOf(s!), shapeOf(p!))).toEqual([]);
  });

  it('export the same names (tables and row types are looked up by the same name)', () => {
    expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort());
  });

  it('give the app the same row types', () => {
    expectTypeOf<pg.RunRow>().toEqualTypeOf<sqlite.RunRow>();
    expectTypeOf<pg.NodeRunRow>().toEqualTypeOf<sqlite.NodeRunRow>();
    expectTypeOf<pg.AttemptRow>().toEqualTypeOf<sqlite.AttemptRow>();
    expectTypeOf<pg.TransportTryRow>().toEqualTypeOf<sqlite.TransportTryRow>();
    expectTypeOf<pg.StreamChunkRow>().toEqualTypeOf<sqlite.StreamChunkRow>();
    expectTypeOf<pg.RateLimitPauseRow>().toEqualTypeOf<sqlite.RateLimitPauseRow>();
    expectTypeOf<pg.PolicyRevisionRow>().toEqualTypeOf<sqlite.PolicyRevisionRow>();
    expectTypeOf<pg.ModelLimitRow>().toEqualTypeOf<sqlite.ModelLimitRow>();
    expectTypeOf<typeof pg.modelLimits.$inferInsert>().toEqualTypeOf<typeof sqlite.modelLimits.$inferInsert>();
    expectTypeOf<typeof pg.runs.$inferInsert>().toEqualTypeOf<typeof sqlite.runs.$inferInsert>();
    expectTypeOf<typeof pg.attempts.$inferInsert>().toEqualTypeOf<typeof sqlite.attempts.$inferInsert>();
    expectTypeOf<typeof pg.transportTries.$inferInsert>().toEqualTypeOf<typeof sqlite.transportTries.$inferInsert>();
    expectTypeOf<typeof pg.policyRevisions.$inferInsert>().toEqualTypeOf<typeof sqlite.policyRevisions.$inferInsert>();
  });

  it('the comparison catches a column, a type or an index added on one side only', () => {
    const a = sqliteTable('t', { id: text('id').primaryKey(), at: integer('at').notNull() });
    const b = pgTable('t', { id: pgText('id').primaryKey(), at: bigint('at', { mode: 'number' }).notNull() });
    expect(differences(shapeOf(a), shapeOf(b))).toEqual([]);

    const extra = pgTable('t', { id: pgText('id').primaryKey(), at: bigint('at', { mode: 'number' }).notNull(), more: pgText('more') });
    expect(differences(shapeOf(a), shapeOf(extra))).toEqual(['t.more: only in the PostgreSQL schema']);

    const nullable = pgTable('t', { id: pgText('id').primaryKey(), at: bigint('at', { mode: 'number' }) });
    expect(differences(shapeOf(a), shapeOf(nullable))).toEqual(['t.at: notNull true vs false']);

    const asText = pgTable('t', { id: pgText('id').primaryKey(), at: pgText('at').notNull() });
    expect(differences(shapeOf(a), shapeOf(asText))).toContain('t.at: SQLite integer vs PostgreSQL text');

    const bigintAsBigInt = pgTable('t', { id: pgText('id').primaryKey(), at: bigint('at', { mode: 'bigint' }).notNull() });
    expect(differences(shapeOf(a), shapeOf(bigintAsBigInt))).toEqual(['t.at: dataType number vs bigint']);
  });
});
