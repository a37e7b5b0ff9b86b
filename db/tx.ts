// Transactions and row counts written once for both dialects (DESIGN: Storage, "One data layer,
// two dialects").
import type { Db, Orm } from './types';

/**
 * Runs `fn` in one write transaction and resolves with its result (rolled back if it throws).
 * PostgreSQL: a transaction on one pooled connection. SQLite: BEGIN IMMEDIATE on the process's one
 * connection (the write lock first, so no other process slips in between a read and its write) —
 * the callback must await only queries of `q`, which SQLite runs synchronously, so no timer or I/O
 * of this process runs inside the transaction; two transactions of this process take turns.
 */
export async function transaction<T>(db: Db, fn: (q: Orm) => Promise<T>): Promise<T> {
  if (db.dialect === 'pg') {
    // the node-postgres transaction object, typed as the queries are (db/pg.ts)
    return (db.q as unknown as { transaction<R>(f: (tx: unknown) => Promise<R>): Promise<R> }).transaction((tx) => fn(tx as Orm));
  }
  const c = db.$client;
  const before = turns.get(c) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  turns.set(c, mine);
  await before;
  try {
    c.exec('BEGIN IMMEDIATE');
    try {
      const out = await fn(db.q);
      c.exec('COMMIT');
      return out;
    } catch (err) {
      if (c.inTransaction) c.exec('ROLLBACK');
      throw err;
    }
  } finally {
    if (turns.get(c) === mine) turns.delete(c);
    done();
  }
}

/** the last transaction to finish on each SQLite connection: the next one waits for it */
const turns = new WeakMap<object, Promise<void>>();
