// `aqven db status` and `aqven db migrate` on both dialects (DESIGN: CLI): the schema version against
// the migrations this aqven ships ("up to date", "N behind"), runs by status, the job queue's depth
// (PostgreSQL: graphile-worker's jobs; "no queue" without its schema, and on SQLite), the workers
// seen in the last minute; migrate prints the version before and after and installs the queue.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePgWith } from 'drizzle-orm/node-postgres/migrator';
import { makeWorkerUtils, runMigrations } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseStatus, journalOf } from '@/db/status-queries';
import { newRecordId } from '@/lib/shared/record-id';
import type { RunStatus } from '@/db/types';
import { runDbMigrate, runDbStatus } from '@/lib/cli/db';
import { captureIo } from '@/lib/cli/io';
import { DIALECTS, openTestDb, type TestDb } from '../helpers/dialects';
import { writeProject } from '../helpers/fixture-project';
import { olderMigrationsFolder } from '../helpers/older-schema';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';

const NOW = 1_790_000_000_000;
const NO_ENV = {}; // no GRAPHILE_WORKER_SCHEMA: the queue's default schema

const journal = { sqlite: journalOf('sqlite'), pg: journalOf('pg') };
const newest = (d: 'sqlite' | 'pg') => journal[d].at(-1)!.tag;
const known = (d: 'sqlite' | 'pg') => journal[d].length;
const plural = (n: number) => `${n} migration${n === 1 ? '' : 's'}`;

const tmp = mkdtempSync(join(tmpdir(), 'aqven-status-test-'));
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const d of databases) await d.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** An empty PostgreSQL database of its own, not migrated. */
async function emptyPg(): Promise<string> {
  const d = await testDatabase();
  databases.push(d);
  return d.url;
}

describe.each(DIALECTS)('aqven db status on %s', (dialect) => {
  let t: TestDb;
  const name = dialect === 'pg' ? 'PostgreSQL' : 'SQLite';

  beforeAll(async () => {
    t = await openTestDb(dialect);
    const { runs, workers } = t.db.t;
    const statuses: RunStatus[] = ['succeeded', 'succeeded', 'succeeded', 'failed', 'running', 'queued', 'interrupted'];
    await t.db.q
      .insert(runs)
      .values(statuses.map((status, i) => ({ id: `r${i}`, project: 'p', flow: 'f', status, input: {}, startedAt: NOW - 1000 + i, leaseExpiresAt: NOW + 60_000 })));
    await t.db.q.insert(workers).values([
      { id: 'w-recent', host: 'höst-a', pid: 101, concurrency: 4, running: 3, startedAt: NOW - 600_000, seenAt: NOW - 5_000 },
      { id: 'w-now', host: 'host-b', pid: 102, concurrency: 2, running: 0, startedAt: NOW - 10_000, seenAt: NOW },
      { id: 'w-gone', host: 'host-c', pid: 103, concurrency: 2, running: 1, startedAt: NOW - 900_000, seenAt: NOW - 61_000 },
      { id: 'w-stopped', host: 'host-d', pid: 104, concurrency: 2, running: 0, startedAt: NOW - 900_000, seenAt: NOW - 1_000, stoppedAt: NOW - 1_000 },
    ]);
  }, 90_000);
  afterAll(() => t?.close());

  it('reports the dialect, the target, the schema version, runs by status and the workers seen in the last minute', async () => {
    const s = await databaseStatus(t.target, NOW, NO_ENV);
    expect(s.dialect).toBe(dialect);
    expect(s.target).toBe(t.db.name);
    expect(s.schema).toEqual({ applied: known(dialect), latest: newest(dialect), known: known(dialect), newest: newest(dialect), behind: 0, ahead: 0, state: 'up to date' });
    expect(s.runs).toEqual({ total: 7, byStatus: { failed: 1, interrupted: 1, queued: 1, running: 1, succeeded: 3 } });
    expect(s.workers.map((w) => [w.id, w.host, w.pid, w.concurrency, w.running, w.seenAgoMs])).toEqual([
      ['w-now', 'host-b', 102, 2, 0, 0],
      ['w-recent', 'höst-a', 101, 4, 3, 5_000],
    ]);
    expect(s.queue).toBeNull(); // SQLite has none; PostgreSQL: graphile-worker's schema is not installed yet
  });

  it('prints it, as text and as JSON', async () => {
    const io = captureIo();
    expect(await runDbStatus({ env: { AQVEN_DATABASE_URL: t.target }, now: NOW }, io)).toBe(0);
    expect(io.stderr).toBe('');
    expect(io.stdout).toBe(
      [
        `database  ${t.db.name} (${name})`,
        `schema    ${known(dialect)} of ${known(dialect)} migrations applied, latest ${newest(dialect)}: up to date`,
        'runs      7: 1 failed, 1 interrupted, 1 queued, 1 running, 3 succeeded',
        dialect === 'pg'
          ? 'queue     no queue (graphile-worker schema not installed: `aqven db migrate`)'
          : 'queue     no queue (SQLite: a run runs in the process that starts it)',
        'workers   2 seen in the last minute:',
        '          w-now  host-b  pid 102  0/2 running  seen just now',
        '          w-recent  höst-a  pid 101  3/4 running  seen 5 s ago',
        '',
      ].join('\n'),
    );
    const json = captureIo();
    expect(await runDbStatus({ env: { AQVEN_DATABASE_URL: t.target }, now: NOW, json: true }, json)).toBe(0);
    const parsed = JSON.parse(json.stdout) as { dialect: string; schema: { state: string; behind: number }; runs: { total: number }; workers: { id: string; seenAgoMs: number }[] };
    expect(parsed).toMatchObject({ dialect, schema: { state: 'up to date', behind: 0 }, runs: { total: 7 } });
    expect(parsed.workers.map((w) => [w.id, w.seenAgoMs])).toEqual([
      ['w-now', 0],
      ['w-recent', 5_000],
    ]);
  });

  if (dialect === 'pg') {
    it('counts the jobs waiting, running and failed once graphile-worker is installed', async () => {
      await runMigrations({ connectionString: t.target });
      const utils = await makeWorkerUtils({ connectionString: t.target });
      try {
        const jobs = await Promise.all(['a', 'b', 'c', 'd'].map((id) => utils.addJob('run', { runId: id })));
        // three jobs keyed by a run, as the queue keys them, each locked: one whose run runs under a
        // live lease, one whose run another worker finished, one whose run's lease expired
        const live = newRecordId();
        const done = newRecordId();
        const dead = newRecordId();
        const row = (id: string, status: RunStatus, leaseExpiresAt: number | null) => ({
          id,
          project: 'p',
          flow: 'triage',
          status,
          input: {},
          startedAt: NOW - 60_000,
          leaseExpiresAt,
        });
        await t.db.q.insert(t.db.t.runs).values([row(live, 'running', NOW + 10_000), row(done, 'succeeded', null), row(dead, 'running', NOW - 1)]);
        const keyed = await Promise.all([live, done, dead].map((id) => utils.addJob('run', { runId: id }, { jobKey: id })));
        const c = new pg.Client({ connectionString: t.target });
        await c.connect();
        await c.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'w-now' WHERE id = ANY($1)`, [[jobs[0]!.id, ...keyed.map((j) => j.id)]]);
        await c.query('UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE id = $1', [jobs[1]!.id]);
        await c.end();
      } finally {
        await utils.release();
      }
      const s = await databaseStatus(t.target, NOW, NO_ENV);
      expect(s.queue).toEqual({ waiting: 2, running: 2, left: 2, failed: 1 });
      const io = captureIo();
      await runDbStatus({ env: { AQVEN_DATABASE_URL: t.target }, now: NOW }, io);
      expect(io.stdout).toContain(
        '\nqueue     2 waiting, 2 running, 1 failed, 2 left locked by a worker that stopped (their runs taken over; graphile-worker unlocks them after 4 h)\n',
      );
    });
  }
});

describe('aqven db migrate', () => {
  it('SQLite: creates the file, prints the version before and after; a second run changes nothing', async () => {
    const path = join(tmp, 'new', 'aqven.db');
    const env = { AQVEN_DATABASE_URL: path };
    const before = captureIo();
    expect(await runDbStatus({ env, now: NOW }, before)).toBe(0);
    expect(before.stdout).toBe(
      `database  ${path} (SQLite)\nschema    no database yet: the first run or \`aqven db migrate\` creates it (${known('sqlite')} migrations to apply)\n`,
    );

    const io = captureIo();
    expect(await runDbMigrate({ env }, io)).toBe(0);
    expect(io.stdout).toBe(`database  ${path} (SQLite)\nschema    no database yet → ${known('sqlite')} migrations, latest ${newest('sqlite')}: up to date\n`);
    const again = captureIo();
    expect(await runDbMigrate({ env }, again)).toBe(0);
    expect(again.stdout).toBe(`database  ${path} (SQLite)\nschema    ${known('sqlite')} migrations, latest ${newest('sqlite')}: already up to date\n`);
  });

  it('SQLite: a file an older aqven migrated is "1 behind" until migrated', async () => {
    const path = join(tmp, 'old.db');
    const { folder, latest } = olderMigrationsFolder('sqlite');
    const conn = new Database(path);
    migrateSqlite(drizzleSqlite(conn), { migrationsFolder: folder });
    conn.close();
    const env = { AQVEN_DATABASE_URL: path };
    const status = captureIo();
    await runDbStatus({ env, now: NOW }, status);
    const n = known('sqlite');
    expect(status.stdout).toContain(`\nschema    ${n - 1} of ${n} migrations applied, latest ${latest} (newest ${newest('sqlite')}): 1 behind; run \`aqven db migrate\`\n`);
    const io = captureIo();
    expect(await runDbMigrate({ env }, io)).toBe(0);
    expect(io.stdout).toContain(`\nschema    ${n - 1} migrations, latest ${latest} → ${n} migrations, latest ${newest('sqlite')}: up to date\n`);
  });

  it('PostgreSQL: an empty database is "not migrated"; migrate applies drizzle/pg and installs the queue schema', async () => {
    const url = await emptyPg();
    const env = { AQVEN_DATABASE_URL: url };
    const s = await databaseStatus(url, NOW, NO_ENV);
    expect(s.schema).toMatchObject({ applied: 0, behind: known('pg'), state: 'not migrated' });
    expect([s.runs, s.queue, s.workers]).toEqual([null, null, []]);
    const shown = captureIo();
    expect(await runDbStatus({ env, now: NOW }, shown)).toBe(0);
    expect(shown.stdout).toContain(`\nschema    0 of ${known('pg')} migrations applied: not migrated; run \`aqven db migrate\`\nruns      no runs table yet\n`);

    const io = captureIo();
    expect(await runDbMigrate({ env }, io)).toBe(0);
    const lines = io.stdout.trim().split('\n');
    expect(lines[0]).toBe(`database  ${url} (PostgreSQL)`);
    expect(lines[1]).toBe(`schema    no migrations applied → ${known('pg')} migrations, latest ${newest('pg')}: up to date`);
    expect(lines[2]).toMatch(/^queue     graphile-worker schema installed \(migration \d+\)$/);
    const again = captureIo();
    expect(await runDbMigrate({ env }, again)).toBe(0);
    expect(again.stdout.trim().split('\n').slice(1)).toEqual([
      `schema    ${known('pg')} migrations, latest ${newest('pg')}: already up to date`,
      lines[2]!.replace('installed', 'up to date'),
    ]);
    const after = await databaseStatus(url, NOW, NO_ENV);
    expect([after.schema.state, after.runs, after.queue]).toEqual(['up to date', { total: 0, byStatus: {} }, { waiting: 0, running: 0, left: 0, failed: 0 }]);
  });

  it('PostgreSQL: a database an older aqven migrated is "1 behind"', async () => {
    const url = await emptyPg();
    const { folder, latest } = olderMigrationsFolder('pg');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await migratePgWith(drizzlePg(pool), { migrationsFolder: folder });
    await pool.end();
    const s = await databaseStatus(url, NOW, NO_ENV);
    expect(s.schema).toMatchObject({ applied: known('pg') - 1, latest, behind: 1, state: '1 behind' });
    expect(s.runs).toEqual({ total: 0, byStatus: {} });
    const io = captureIo();
    expect(await runDbMigrate({ env: { AQVEN_DATABASE_URL: url } }, io)).toBe(0);
    expect(io.stdout).toContain(`schema    ${plural(known('pg') - 1)}, latest ${latest} → ${known('pg')} migrations, latest ${newest('pg')}: up to date\n`);
  });

  it("without AQVEN_DATABASE_URL the project's SQLite file is the target; a server that cannot be reached exits 3", async () => {
    const project = await writeProject();
    const io = captureIo();
    expect(await runDbStatus({ project, env: {}, now: NOW }, io)).toBe(0);
    expect(io.stdout.split('\n')[0]).toBe(`database  ${join(project, '.aqven', 'aqven.db')} (SQLite)`);
    rmSync(project, { recursive: true, force: true });

    const junk = join(tmp, 'junk.db');
    writeFileSync(junk, 'not a database, only words that fill more than the header of a page\n'.repeat(20));
    for (const run of [runDbStatus, runDbMigrate]) {
      const bad = captureIo();
      expect(await run({ env: { AQVEN_DATABASE_URL: junk } }, bad)).toBe(3);
      expect(bad.stderr).toMatch(new RegExp(`^aqven db (status|migrate): the run database ${junk} is damaged or not an AQVEN database \\(SQLITE_NOTADB\\)`));
    }

    for (const run of [runDbStatus, runDbMigrate]) {
      const down = captureIo();
      expect(await run({ env: { AQVEN_DATABASE_URL: 'postgres://aqven:secret@127.0.0.1:1/none' } }, down)).toBe(3);
      expect(down.stderr).toMatch(/^aqven db (status|migrate): cannot connect to the PostgreSQL database postgres:\/\/aqven:\*\*\*@127\.0\.0\.1:1\/none: .*ECONNREFUSED.*\n$/);
      expect(down.stdout).toBe('');
    }
  });
});
