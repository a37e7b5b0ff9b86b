// A history recorded before the team-debugging migration (DESIGN: Storage, "Notes, search and
// daily statistics") gets, once migrated and opened, the same daily sums, search documents and
// failure signatures as the same history recorded live: the migration's SQL fills the sums and the
// search index, db/backfill.ts stamps the signatures at the first open. Running the backfill again
// changes nothing; two processes backfilling at once count nothing twice (PostgreSQL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { getTableColumns } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePgWith } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillFailureSignatures, FAILURE_SIG_BACKFILL } from '@/db/backfill';
import { closeDb, markInterrupted, openDatabase, openDb } from '@/db/client';
import { openPg } from '@/db/pg';
import { LEASE_TTL_MS, leaseKeeper, newLease } from '@/db/run-lease';
import { runStore } from '@/db/run-store';
import * as sqliteSchema from '@/db/schema';
import * as pgSchema from '@/db/schema-pg';
import type { Db } from '@/db/types';
import { DIALECTS, otherProcess, type Dialect } from '../helpers/dialects';
import { stored } from '../helpers/feeds-scan';
import { olderMigrationsFolder } from '../helpers/older-schema';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';

/** the columns of runs, node_runs and attempts that the team-debugging migration and later ones added: a history written before it has none of them */
const ADDED = new Set([
  'kind',
  'replay_of',
  'replay_node',
  'failure_sig',
  'reasoning_tokens',
  'cost_source',
  'in_flight_try',
  'in_flight_at',
  'in_flight_generation',
  'trace_id',
  'traceparent',
]);
const TABLES = ['runs', 'nodeRuns', 'attempts'] as const;

/** A history like the one recorded in `from`, written at the schema before the team-debugging migration. */
interface OldHistory {
  target: string;
  /** migrated to the current schema (its SQL backfill run) without the open's backfill */
  migrateOnly(): Promise<Db>;
  close(): Promise<void>;
}

async function rowsOf(db: Db) {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const key of TABLES) out[key] = (await db.q.select().from(db.t[key] as typeof db.t.runs)) as Record<string, unknown>[];
  return out;
}

/** INSERTs of `rows` into `table` of the other schema, the added columns left out, each value encoded as drizzle would. */
function inserts(dialect: Dialect, key: (typeof TABLES)[number], rows: Record<string, unknown>[]) {
  const table = (dialect === 'sqlite' ? sqliteSchema : pgSchema)[key];
  const cols = Object.entries(getTableColumns(table)).filter(([, c]) => !ADDED.has(c.name));
  const name = { runs: 'runs', nodeRuns: 'node_runs', attempts: 'attempts' }[key];
  const text = `INSERT INTO "${name}" (${cols.map(([, c]) => `"${c.name}"`).join(', ')}) VALUES (${cols.map((_, i) => (dialect === 'pg' ? `$${i + 1}` : '?')).join(', ')})`;
  return rows.map((r) => ({ text, values: cols.map(([k, c]) => (r[k] === null || r[k] === undefined ? null : c.mapToDriverValue(r[k]))) }));
}

async function oldHistory(dialect: Dialect, rows: Record<string, Record<string, unknown>[]>): Promise<OldHistory> {
  // the team-debugging migration and the ones after it (model_limits, run_short_id; on SQLite search_write_behind) left out
  const { folder } = olderMigrationsFolder(dialect, { before: 'team_debugging' });
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'aqven-backfill-'));
    const target = join(dir, 'old.db');
    const conn = new Database(target);
    migrateSqlite(drizzleSqlite(conn), { migrationsFolder: folder });
    conn.transaction(() => {
      for (const key of TABLES) for (const st of inserts(dialect, key, rows[key]!)) conn.prepare(st.text).run(st.values);
    })();
    conn.close();
    return {
      target,
      migrateOnly: async () => openDb(target),
      close: async () => {
        await closeDb(target);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database: TestDatabase = await testDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await migratePgWith(drizzlePg(client), { migrationsFolder: folder });
    for (const key of TABLES) for (const st of inserts(dialect, key, rows[key]!)) await client.query(st.text, st.values);
  } finally {
    await client.end();
  }
  return {
    target: database.url,
    migrateOnly: () => openPg(database.url),
    close: async () => {
      await closeDb(database.url);
      await database.stop();
    },
  };
}

async function searchDocs(db: Db) {
  const d = db.t.searchDocs;
  const rows = await db.q.select({ runId: d.runId, nodeRunId: d.nodeRunId, attemptId: d.attemptId, field: d.field, body: d.body, at: d.at }).from(d);
  return rows.map((r) => JSON.stringify(r)).sort();
}

describe.each(DIALECTS)('the backfill of an older history, on %s', (dialect) => {
  let w: World<Db>;
  let rows: Record<string, Record<string, unknown>[]>;
  const olds: OldHistory[] = [];
  beforeAll(async () => {
    w = await worldOn(dialect, {});
    const scripts = [
      {
        [FLASH_LITE]: [{ kind: 'invalid' as const, mode: 'wrong_enum' as const }, { kind: 'ok' as const }],
        [GPT_OSS]: [{ kind: 'ok' as const, text: 'Your refund is on its way.' }],
      },
      { [FLASH_LITE]: [{ kind: 'refusal' as const }], [GPT_OSS]: [{ kind: 'ok' as const }] },
      { [FLASH_LITE]: [{ kind: 'ok' as const }], [GPT_OSS]: [{ kind: 'provider_error' as const, message: 'upstream overloaded (request req_91ka7b2c)' }] },
      { [FLASH_LITE]: [{ kind: 'invalid' as const, mode: 'not_json' as const }], [GPT_OSS]: [{ kind: 'truncated' as const }] },
    ];
    for (const [i, s] of scripts.entries()) {
      w.sim.loadScripts(s);
      await w.run('triage', { ticket: `ticket ${i}: a capybara was billed twice` });
    }
    // a run whose process died: its node failed and its attempt closed by the sweep
    const store = runStore(w.db);
    const t0 = Date.UTC(2026, 0, 5, 23, 59, 59);
    await store.insertRun({ id: 'swept', project: 'p', flow: 'triage', input: 'a text input', startedAt: t0, lease: newLease('swept', t0) });
    store.insertNode({ id: 'swept-n', runId: 'swept', nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: t0 });
    store.startAttempt({ id: 'swept-a', nodeRunId: 'swept-n', runId: 'swept', seq: 1, model: 'x:y', chainIndex: 0, answerNo: 1, request: [], startedAt: t0 + 1 });
    await store.flush();
    leaseKeeper(w.db).drop('swept');
    await markInterrupted(w.db, t0 + LEASE_TTL_MS + 1);
    rows = await rowsOf(w.db);
  }, 120_000);
  afterAll(async () => {
    for (const o of olds) await o.close();
    await w?.close();
  });

  it('gives the sums, search documents and signatures live recording gave', async () => {
    const old = await oldHistory(dialect, rows);
    olds.push(old);
    const db = await openDatabase(old.target);
    const live = await stored(w.db);
    const backfilled = await stored(db);
    expect(backfilled.sigs).toEqual(live.sigs);
    expect(backfilled.agentDaily).toEqual(live.agentDaily);
    expect(backfilled.nodeDaily).toEqual(live.nodeDaily);
    expect(backfilled.failureDaily).toEqual(live.failureDaily);
    expect(live.failureDaily.length).toBeGreaterThanOrEqual(6);
    expect(await searchDocs(db)).toEqual(await searchDocs(w.db));

    // again: the settings row says it is done
    expect(await backfillFailureSignatures(db)).toEqual({ attempts: 0, nodes: 0, ran: false });
    // and without it, nothing is stamped or counted twice
    const { settings } = db.t;
    await db.q.delete(settings);
    expect(await backfillFailureSignatures(db)).toEqual({ attempts: 0, nodes: 0, ran: true });
    expect(await stored(db)).toEqual(backfilled);
    expect((await db.q.select().from(settings)).map((s) => s.key)).toEqual([FAILURE_SIG_BACKFILL]);
  });

  it.runIf(dialect === 'pg')('two processes backfilling at once count each failure once', async () => {
    const old = await oldHistory(dialect, rows);
    olds.push(old);
    const db = await old.migrateOnly();
    const second = otherProcess({ db, target: old.target, close: async () => undefined });
    try {
      // small batches: the two interleave
      const [a, b] = await Promise.all([backfillFailureSignatures(db, { batch: 2 }), backfillFailureSignatures(second.db, { batch: 2 })]);
      const live = await stored(w.db);
      expect(a.attempts + b.attempts).toBe(Object.entries(live.sigs).filter(([id, sig]) => sig && rows.attempts!.some((x) => x.id === id)).length);
      const backfilled = await stored(db);
      expect(backfilled.sigs).toEqual(live.sigs);
      expect(backfilled.failureDaily).toEqual(live.failureDaily);
    } finally {
      await second.close();
    }
  });
});
