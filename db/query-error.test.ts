// A failed query said in one line: the database's reason, never drizzle's "Failed query: <SQL>
// params: <values>" (PostgreSQL's driver errors come wrapped so) — the values are run data (an
// input, an error text) that a worker's log must not carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestDb } from '@/test/helpers/dialects';
import { queryErrorText } from './pg';

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb('pg');
}, 90_000);
afterAll(async () => t?.close());

describe('queryErrorText', () => {
  it("gives the driver's reason of a failed query without its SQL or parameters", async () => {
    const row = { id: 'run-1', project: 'p', flow: 'f', status: 'succeeded' as const, input: { ticket: 'anna secret ticket text' }, startedAt: 1 };
    await t.db.q.insert(t.db.t.runs).values(row);
    const err = await t.db.q.insert(t.db.t.runs).values(row).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err instanceof Error && err.message).toMatch(/^Failed query: insert into "runs"[\s\S]*anna secret ticket text/);
    const said = queryErrorText(err);
    expect(said).toMatch(/duplicate key value violates unique constraint "runs_pkey" \(23505\)/);
    expect(said).not.toContain('anna secret');
    expect(said).not.toContain('insert into');
    expect(said.includes('\n')).toBe(false);
  });

  it('leaves any other error as its message', () => {
    expect(queryErrorText(new Error('the lease was lost'))).toBe('the lease was lost');
    expect(queryErrorText('plain')).toBe('plain');
  });
});
