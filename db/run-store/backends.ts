// How each dialect prepares and commits the run store's statements (DESIGN: Storage, "One data
// layer, two dialects"). SQLite runs them synchronously on its one connection and commits the queue
// in one synchronous transaction; PostgreSQL sends the same statements, in order, on one pooled
// connection per commit, the fence checks first (`FOR SHARE`: a take-over waits for the commit).
import type pg from 'pg';
import { indexPendingSearchDocs } from '../search-index';
import { pgStatement, writeStatement } from '../typed-sql';
import type { Db, Orm } from '../types';
import type { Prepare } from './statements';

/** reads (PostgreSQL) which runs of a commit are still ours, inside its transaction, before anything is written */
export type FenceCheck = (ids: string[], q: Orm, client: pg.PoolClient) => Promise<Map<string, boolean>>;

/**
 * How a dialect prepares and commits the store's statements. SQLite: prepared once, run at once,
 * the commit synchronous. PostgreSQL: each run() adds its statement to the commit's batch, sent in
 * order on the commit's connection once the queue is drained, then COMMIT.
 */
export interface Backend {
  prepare: Prepare;
  /** runs `drain` in one write transaction; `fence(runIds)` first tells which runs are still ours (PostgreSQL) */
  transaction(runIds: string[], fence: FenceCheck, drain: () => void): void | Promise<void>;
  /** a failed commit: make room for the next (SQLite: checkpoint the WAL into the file) */
  afterFailure(): void;
  /** after a flush: what the store feeds behind its commits is done too (SQLite: the full-text index, db/search-index.ts) */
  afterFlush(): void;
}

/** how long search docs may wait to be indexed after the commit that wrote them (SQLite) */
const SEARCH_INDEX_MS = 1_000;

export function sqliteBackend(db: Extract<Db, { dialect: 'sqlite' }>): Backend {
  const c = db.$client;
  // made once: better-sqlite3 builds a transaction's four wrappers on every transaction() call
  const tx = c.transaction((drain: () => void) => drain());
  // the full-text index of the search docs the commits wrote, in batches (db/search-index.ts)
  let indexTimer: ReturnType<typeof setTimeout> | null = null;
  let toldIndex = false;
  const indexNow = () => {
    if (indexTimer) clearTimeout(indexTimer);
    indexTimer = null;
    try {
      if (c.open) indexPendingSearchDocs(db);
    } catch (err) {
      // the docs stay in search_docs: the next batch (or search) indexes them
      if (!toldIndex) console.error(`aqven: indexing run text for search failed (tried again later): ${err instanceof Error ? err.message : String(err)}`);
      toldIndex = true;
    }
  };
  return {
    prepare: (query, binding) => writeStatement(c, query, binding),
    transaction: (_ids, _fence, drain) => {
      // IMMEDIATE: the write lock is taken first, so no sweep can slip between the fence checks and the writes
      tx.immediate(drain);
      if (!indexTimer) {
        indexTimer = setTimeout(indexNow, SEARCH_INDEX_MS);
        indexTimer.unref?.();
      }
    },
    afterFlush: indexNow,
    afterFailure: () => {
      // a full disk: what the WAL holds goes into the database file, so that the small write
      // recording the run's failure may still fit (best effort)
      try {
        c.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // the checkpoint needs room too
      }
    },
  };
}

/** PostgreSQL's deadlock_detected and serialization_failure: the commit is tried again */
const RETRYABLE = new Set(['40P01', '40001']);
const COMMIT_TRIES = 3;

/** names of the run store's PostgreSQL statements: the same text always gets the same name in a process */
let statementNo = 0;

export function pgBackend(db: Extract<Db, { dialect: 'pg' }>): Backend {
  /** the statements of the commit in progress, sent once the batch is drained */
  let current: { name: string; text: string; values: unknown[] }[] | null = null;
  return {
    prepare: (query, binding) => {
      const st = pgStatement(query, binding);
      // a named statement: each connection parses and plans it once, then only binds
      const name = `aqven_store_${++statementNo}`;
      return {
        run: (values) => {
          if (!current) throw new Error('a run-store statement was queued outside a commit');
          current.push({ name, text: st.text, values: st.values(values) });
        },
      };
    },
    transaction: async (ids, fence, drain) => {
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        const fences = await fence(ids, db.q, client);
        const batch: { name: string; text: string; values: unknown[] }[] = (current = []);
        try {
          drain();
        } finally {
          current = null;
        }
        for (let tries = 1; ; tries++) {
          try {
            // one after another on this connection (node-postgres sends a client's queries in order)
            for (const st of batch) await client.query(st);
            await client.query('COMMIT');
            return;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            // a deadlock or a serialization failure rolled the batch back: the same batch is sent
            // again, as long as the fences it was drained under still hold
            if (tries >= COMMIT_TRIES || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
            await client.query('BEGIN');
            const again = await fence(ids, db.q, client);
            if ([...fences].some(([id, ok]) => again.get(id) !== ok)) throw err;
          }
        }
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    afterFailure: () => undefined,
    afterFlush: () => undefined,
  };
}
