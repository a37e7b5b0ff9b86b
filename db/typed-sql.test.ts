// Statements bound by name (DESIGN: Storage, "Typed statements"): each value lands in the column
// its name says, whatever the order it is given in; a binding and its query must name the same
// placeholders (checked once, when prepared); and — checked by `tsc`, which type-checks this
// file — a misspelt column, a value of another column's type or a column left out does not compile,
// for the run store's own statements too, whose insert types are the same on both dialects.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { openTestDb, type TestDb } from '../test/helpers/dialects';
import type { Statements } from './run-store/statements';
import * as schema from './schema';
import * as pgSchema from './schema-pg';
import { bindAll, bindColumns, bindValues, placeholders, writeStatement, type ColumnValues, type WriteStatement } from './typed-sql';
import type { SqliteDb } from './types';

describe('statements bound by name', () => {
  let t: TestDb;
  let db: SqliteDb;
  beforeAll(async () => {
    t = await openTestDb('sqlite');
    db = t.db as SqliteDb;
  }, 90_000);
  afterAll(async () => {
    await t.close();
  });

  it('binds each value to the placeholder of its name, in whatever order the values are given', async () => {
    const p = db.t.rateLimitPauses;
    const keys = ['model', 'pausedUntil', 'setAt', 'askedMs', 'maxWaitMs', 'reason', 'serverWait'] as const;
    const st = writeStatement(db.$client, db.q.insert(p).values(placeholders(p, keys)), bindColumns(p, keys));
    st.run({ maxWaitMs: 5, askedMs: 4, setAt: 3, pausedUntil: 2, model: 'sim:a', serverWait: null, reason: 'r' });
    const [row] = await db.q.select().from(p).where(eq(p.model, 'sim:a'));
    expect(row).toMatchObject({ pausedUntil: 2, setAt: 3, askedMs: 4, maxWaitMs: 5, reason: 'r', serverWait: null });
  });

  it('encodes a value by its column (JSON, boolean), and writes a value bound raw as given', async () => {
    const r = db.t.runs;
    const keys = ['id', 'project', 'flow', 'startedAt', 'status'] as const;
    const st = writeStatement(
      db.$client,
      db.q.insert(r).values({ ...placeholders(r, [...keys, 'output']), input: sql`${sql.placeholder('input')}` }),
      bindAll(bindColumns(r, [...keys, 'output']), bindValues<{ input: string }>('input')),
    );
    st.run({ id: 'r1', project: 'p', flow: 'f', startedAt: 1, status: 'succeeded', output: { a: 1 }, input: '"as text"' });
    const [row] = await db.q.select({ input: r.input, output: r.output }).from(r).where(eq(r.id, 'r1'));
    expect(row).toEqual({ input: 'as text', output: { a: 1 } });
  });

  it('refuses, when prepared, a binding that names a value its query has no placeholder for, or leaves one out', () => {
    const p = db.t.rateLimitPauses;
    const query = db.q.insert(p).values(placeholders(p, ['model', 'pausedUntil', 'reason']));
    expect(() => writeStatement(db.$client, query, bindColumns(p, ['model', 'pausedUntil', 'reason', 'setAt']))).toThrow(/no placeholder "setAt"/);
    expect(() => writeStatement(db.$client, query, bindColumns(p, ['model', 'reason']))).toThrow(/placeholder "pausedUntil" .* is not among the values/);
  });
});

// never called: what `tsc --noEmit` must refuse (each @ts-expect-error fails the type check if its line compiles)
export function refusedAtCompileTime(st: WriteStatement<ColumnValues<typeof schema.attempts, 'seq' | 'model' | 'inputTokens' | 'outputTokens'>>, s: Statements) {
  // @ts-expect-error a misspelt column
  st.run({ seq: 1, modle: 'sim:a', inputTokens: 1, outputTokens: 2 });
  // @ts-expect-error two values swapped: the model where the sequence number goes
  st.run({ seq: 'sim:a', model: 1, inputTokens: 1, outputTokens: 2 });
  // @ts-expect-error a column left out
  st.run({ seq: 1, model: 'sim:a', inputTokens: 1 });
  // @ts-expect-error the store's statements are typed the same way: an attempt's start with text where its answer number goes
  s.startAttempt.run({ id: 'a', nodeRunId: 'n', runId: 'r', seq: 1, model: 'm', chainIndex: 0, answerNo: 'first', request: [], startedAt: 1 });
  // @ts-expect-error an update's row named by a misspelt id
  s.setRunTurns.run({ turns: 2, runId: 'r' });
}

describe('the insert types the store binds by', () => {
  it('are the same over db/schema-pg.ts as over db/schema.ts (the statements are typed once, for both dialects)', () => {
    expectTypeOf<typeof pgSchema.runs.$inferInsert>().toEqualTypeOf<typeof schema.runs.$inferInsert>();
    expectTypeOf<typeof pgSchema.nodeRuns.$inferInsert>().toEqualTypeOf<typeof schema.nodeRuns.$inferInsert>();
    expectTypeOf<typeof pgSchema.attempts.$inferInsert>().toEqualTypeOf<typeof schema.attempts.$inferInsert>();
    expectTypeOf<typeof pgSchema.transportTries.$inferInsert>().toEqualTypeOf<typeof schema.transportTries.$inferInsert>();
    expectTypeOf<typeof pgSchema.streamChunks.$inferInsert>().toEqualTypeOf<typeof schema.streamChunks.$inferInsert>();
    expectTypeOf<typeof pgSchema.searchDocs.$inferInsert>().toEqualTypeOf<typeof schema.searchDocs.$inferInsert>();
    expectTypeOf<typeof pgSchema.agentDaily.$inferInsert>().toEqualTypeOf<typeof schema.agentDaily.$inferInsert>();
    expectTypeOf<typeof pgSchema.nodeDaily.$inferInsert>().toEqualTypeOf<typeof schema.nodeDaily.$inferInsert>();
    expectTypeOf<typeof pgSchema.failureDaily.$inferInsert>().toEqualTypeOf<typeof schema.failureDaily.$inferInsert>();
    expectTypeOf<typeof pgSchema.callerSpend.$inferInsert>().toEqualTypeOf<typeof schema.callerSpend.$inferInsert>();
    expectTypeOf<typeof pgSchema.rateLimitPauses.$inferInsert>().toEqualTypeOf<typeof schema.rateLimitPauses.$inferInsert>();
  });
});
