// A failed query said in one line: the database's reason, never drizzle's "Failed query: <SQL>
// params: <values>" (PostgreSQL's driver errors come wrapped so) — the values are run data (an
// input, an error text) that a worker's log must not carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestDb } from '@/test/helpers/dialects';
import pg from 'pg';
import { isConnectionLoss, queryErrorText } from './pg';

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb('pg');
}, 90_000);
afterAll(async () => t?.close());

describe('queryErrorText', () => {
  it("gives the driver's reason of a failed query without its SQL or parameters", async () => {
    const row = { id: 'run-1', project: 'p', flow: 'f', status: 'succeeded' as const, input: { ticket: 'anna secret ticket text' }, startedAt: 1 };
    await t.db.q.insert(t.db.t.runs).values(row);
    const err = await t.db.q
      .insert(t.db.t.runs)
      .values(row)
      .then(
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

describe('isConnectionLoss', () => {
  it('tells a refused or dropped connection from a failure of the query itself', async () => {
    // a port nothing listens on, by address and by a name with two addresses (an AggregateError)
    for (const host of ['127.0.0.1', 'localhost']) {
      const client = new pg.Client({ connectionString: `postgres://x:y@${host}:1/none` });
      const refused = await client.connect().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isConnectionLoss(refused)).toBe(true);
    }
    // the server ending our connection (a restart): admin_shutdown
    expect(isConnectionLoss(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isConnectionLoss(new Error('Connection terminated unexpectedly'))).toBe(true);
    // drizzle's wrapper around a lost connection
    expect(isConnectionLoss(new Error('Failed query: select 1', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }))).toBe(true);
    // the query itself failed: not a connection matter
    const dup = await t.db.q
      .insert(t.db.t.runs)
      .values({ id: 'run-1', project: 'p', flow: 'f', status: 'succeeded', startedAt: 1 })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isConnectionLoss(dup)).toBe(false);
    expect(isConnectionLoss(new Error('the lease was lost'))).toBe(false);
  });
});
