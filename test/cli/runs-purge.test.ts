// `aqven runs purge` as a user runs it: the period from the flag or aqven.yaml's `retention`, a dry
// run that deletes nothing, what it deleted and the space it says, the clear usage errors (exit 2),
// on a project's SQLite file and on PostgreSQL (AQVEN_DATABASE_URL).
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDatabase, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { seedRuns, type SeedRun } from '../helpers/seed-history';
import { copyShowcase } from '../helpers/showcase';
import { captureIo } from '@/lib/cli/io';
import { registerRun } from '@/lib/cli/run';
import { registerRunsPurge, runRunsPurge } from '@/lib/cli/runs-purge';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12);

const run = (id: string, startedAt: number): SeedRun => ({
  id,
  status: 'succeeded',
  startedAt,
  nodes: [{ nodeId: 'classify', agent: 'classifier', status: 'succeeded', startedAt, attempts: [{ cause: 'refusal', message: 'no', startedAt }, { startedAt: startedAt + 5 }] }],
});
const HISTORY = [run('a-100d', NOW - 100 * DAY), run('b-40d', NOW - 40 * DAY), run('c-10d', NOW - 10 * DAY), run('d-1h', NOW - 3_600_000)];

async function seeded(target: string): Promise<void> {
  const db = await openDatabase(target);
  try {
    await seedRuns(db, HISTORY);
  } finally {
    await closeDatabase(db);
  }
}

async function runIds(target: string): Promise<string[]> {
  const db: Db = await openDatabase(target);
  try {
    return (await db.q.select({ id: db.t.runs.id }).from(db.t.runs).orderBy(db.t.runs.id)).map((r) => r.id);
  } finally {
    await closeDatabase(db);
  }
}

describe('aqven runs purge on a project’s SQLite file', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = copyShowcase();
    file = join(dir, '.aqven', 'aqven.db');
    await seeded(file);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('without --older-than and without `retention` in aqven.yaml says what to give, exits 2 and deletes nothing', async () => {
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, now: NOW, env: {} }, io)).toBe(2);
    expect(io.stderr).toMatch(/^aqven runs purge: say how old a run must be to go: --older-than 90d, or `retention: 90d` in .*aqven\.yaml/);
    expect(await runIds(file)).toHaveLength(4);
  });

  it('refuses a period that is not one (exit 2), before reading anything', async () => {
    for (const bad of ['90', '90x', '-3d', '0d', 'soon']) {
      const io = captureIo();
      expect(await runRunsPurge({ project: dir, olderThan: bad, now: NOW, env: {} }, io), bad).toBe(2);
      expect(io.stderr).toContain(`aqven runs purge: --older-than "${bad}" is not a period: write how long runs are kept as a number and a unit: "90d"`);
    }
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, olderThan: '30d', batch: 'lots', now: NOW, env: {} }, io)).toBe(2);
    expect(io.stderr).toContain('--batch must be a whole number');
  });

  it('refuses a period beyond 100 years in one line (a cutoff no run could predate), and its help says m is minutes', async () => {
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, olderThan: '99999999d', now: NOW, env: {} }, io)).toBe(2);
    expect(io.stderr).toBe('aqven runs purge: --older-than 99999999d is longer than 100 years (36525d), the longest period a run may be kept; nothing was deleted\n');
    expect(await runIds(file)).toHaveLength(4);
    const ok = captureIo();
    expect(await runRunsPurge({ project: dir, olderThan: '36525d', dryRun: true, now: NOW, env: {} }, ok)).toBe(0);
    const program = new Command('aqven');
    registerRun(program);
    const purge = registerRunsPurge(program);
    expect(purge.helpInformation().replace(/\s+/g, ' ')).toContain('m minutes');
  });

  it('on a dry run counts the runs older than the period and deletes nothing', async () => {
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, olderThan: '30d', dryRun: true, json: true, now: NOW, env: {} }, io)).toBe(0);
    const out = JSON.parse(io.stdout) as { dryRun: boolean; olderThan: string; cutoff: number; deleted: Record<string, number> };
    expect(out).toMatchObject({ dryRun: true, olderThan: '30d', cutoff: NOW - 30 * DAY });
    expect(out.deleted).toMatchObject({ runs: 2, nodeRuns: 2, attempts: 4 });
    expect(await runIds(file)).toEqual(['a-100d', 'b-40d', 'c-10d', 'd-1h']);
  });

  it('takes the period from `retention` in aqven.yaml, says what it deleted and what became of the space', async () => {
    appendFileSync(join(dir, 'aqven.yaml'), 'retention: "30d"\n');
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, now: NOW, env: {} }, io)).toBe(0);
    expect(io.stderr).toBe('');
    expect(io.stdout).toContain(`Deleted the runs started before 2026-05-16 12:00 UTC (older than 30d) from ${file}:`);
    expect(io.stdout).toMatch(/^ {2}runs +2$/m);
    expect(io.stdout).toMatch(/^ {2}attempts +4$/m);
    expect(io.stdout).toMatch(/^ {2}failure_daily +2$/m);
    expect(io.stdout).toMatch(/Space: the file keeps its [\d.]+ (KiB|MiB); .* which new runs reuse\. To shrink the file, stop every writer and run VACUUM/);
    expect(await runIds(file)).toEqual(['c-10d', 'd-1h']);
  });

  it('the flag wins over the setting; `runs purge` is a subcommand of `runs` that reads --project and --json wherever they stand', async () => {
    const program = new Command('aqven').exitOverride();
    const io = captureIo();
    registerRun(program);
    registerRunsPurge(program, io);
    // the clock is real here: every seeded run is older than an hour before now
    await program.parseAsync(['node', 'aqven', 'runs', 'purge', '--project', dir, '--older-than', '5d', '--json']);
    expect(io.code).toBe(0);
    expect(JSON.parse(io.stdout)).toMatchObject({ dryRun: false, olderThan: '5d', deleted: { runs: 2 } });
    expect(await runIds(file)).toEqual([]);
  });

  it('a retention that is not a period fails aqven check: exit 2 with the file and line', async () => {
    const yaml = join(dir, 'aqven.yaml');
    writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('retention: "30d"', 'retention: "soon"'));
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, now: NOW, env: {} }, io)).toBe(2);
    expect(io.stderr).toMatch(/aqven\.yaml:\d+:\d+/);
    expect(io.stderr).toMatch(/aqven runs purge: the project .* fails aqven check/);
  });

  it('with no database yet says so and creates none', async () => {
    const fresh = copyShowcase();
    try {
      const io = captureIo();
      expect(await runRunsPurge({ project: fresh, olderThan: '90d', now: NOW, env: {} }, io)).toBe(0);
      expect(io.stdout).toContain('Nothing to delete: there is no database at');
      expect(existsSync(join(fresh, '.aqven', 'aqven.db'))).toBe(false);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe('aqven runs purge on PostgreSQL', () => {
  let pg: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    pg = await testDatabase({ migrated: true });
    dir = copyShowcase();
    await seeded(pg.url);
  }, 90_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await pg?.stop();
  });

  it('deletes from the database of AQVEN_DATABASE_URL and says how PostgreSQL gives the space back', async () => {
    const io = captureIo();
    expect(await runRunsPurge({ project: dir, olderThan: '30d', now: NOW, env: { AQVEN_DATABASE_URL: pg.url } }, io)).toBe(0);
    expect(io.stdout).toMatch(/^ {2}runs +2$/m);
    expect(io.stdout).toContain('PostgreSQL reuses the space of deleted rows once (auto)vacuum has passed');
    expect(io.stdout).not.toContain(new URL(pg.url).password || '\u0000');
    expect(await runIds(pg.url)).toEqual(['c-10d', 'd-1h']);
    const db = await openDatabase(pg.url);
    try {
      expect(Number((await db.q.select({ n: count() }).from(db.t.attempts))[0]!.n)).toBe(4);
    } finally {
      await closeDatabase(db);
    }
  });
});
