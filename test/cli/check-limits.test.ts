// `aqven check` with measured limits (W_SCHEMA_LIMIT): it reads the run database read-only, warns
// at the showcase node that asks for more than its models held, not at the one that fits, says
// nothing without a database (or one from before the limits table), and writes nothing.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDb } from '@/db/client';
import { openModelLimit, saveModelLimit } from '@/db/limits-queries';
import type { Db } from '@/db/types';
import type { LimitDimension } from '@/lib/shared/limits-types';
import { openTestDb, type TestDb } from '@/test/helpers/dialects';
import { copyShowcase } from '@/test/helpers/showcase';
import { positionOf } from '@/test/helpers/fixture-project';
import { runCheck } from '@/lib/cli/check';
import { captureIo } from '@/lib/cli/io';

const FLASH_LITE = 'openrouter:google/gemini-2.5-flash-lite';
const GPT_OSS = 'openrouter:openai/gpt-oss-20b';
const KEY = { OPENROUTER_API_KEY: 'sk-test' };

/** A finished measurement of `model` on `dimension`: held `held`, failed at `held + 1`. */
async function measured(db: Db, model: string, dimension: LimitDimension, held: number, measuredOn = '2026-11-30'): Promise<void> {
  const settings = { trials: 10, threshold: 0.9, maxTokens: 4096, strict: false as const, tasks: 1 };
  const row = await openModelLimit(db, { model, dimension, settingsKey: 'test', measuredOn }, { settings, runId: null, now: 1 });
  const level = (n: number, ok: number) => ({ level: n, trials: 10, firstTryValid: ok, afterRepairValid: ok, truncated: 0, calls: 10 });
  await saveModelLimit(
    db,
    row.id,
    { status: 'complete', lastHeld: held, firstFailed: held + 1, levels: [level(held, 10), level(held + 1, 4)], calls: 20, inputTokens: 100, outputTokens: 100, costUsd: 0 },
    2,
  );
}

/** The flash-lite's figures the catalogue node of flows/order-intake.yaml asks more than (7 deep, 60 items, 48 values), and the order node does not (3 deep, 1 item, 4 values). */
async function seedShowcaseLimits(db: Db): Promise<void> {
  await measured(db, FLASH_LITE, 'depth', 5);
  await measured(db, FLASH_LITE, 'list', 40);
  await measured(db, FLASH_LITE, 'enum', 30);
}

const fileState = (path: string) => ({ mtimeMs: statSync(path).mtimeMs, sha: createHash('sha256').update(readFileSync(path)).digest('hex') });

const FLOW_FILE = 'flows/order-intake.yaml';

describe('aqven check W_SCHEMA_LIMIT (SQLite)', () => {
  let dir: string;
  let dbFile: string;
  let flowText: string;

  beforeAll(async () => {
    dir = copyShowcase();
    dbFile = join(dir, '.aqven', 'aqven.db');
    flowText = readFileSync(join(dir, FLOW_FILE), 'utf8');
    const db = openDb(dbFile);
    await seedShowcaseLimits(db);
    await closeDb(dbFile);
  });

  it('warns at the node that asks too much, with the figure and the date, and not at the one that fits', async () => {
    const io = captureIo();
    expect(await runCheck({ project: dir, json: true, env: KEY }, io)).toBe(0);
    const out = JSON.parse(io.stdout) as { file: string; line: number; col: number; code: string; message: string; hint: string; path: (string | number)[] }[];
    expect(out.every((d) => d.code === 'W_SCHEMA_LIMIT' && d.file === FLOW_FILE)).toBe(true);
    expect(out.map((d) => d.path.slice(0, 2))).toEqual([
      ['nodes', 'catalogue'],
      ['nodes', 'catalogue'],
      ['nodes', 'catalogue'],
    ]);
    const [depth, enumOf, list] = out;
    // level 6, the first past the 5 that held: the object under "shelf"
    expect(depth).toMatchObject({
      ...positionOf(flowText, 'shelf:'),
      path: ['nodes', 'catalogue', 'output', 'properties', 'order', 'properties', 'warehouse', 'properties', 'building', 'properties', 'aisle', 'properties', 'shelf'],
    });
    expect(depth.message).toBe(`the output schema of node "catalogue" nests 7 levels deep; model "${FLASH_LITE}" held depth 5 and failed at 6 (measured 2026-11-30)`);
    expect(enumOf).toMatchObject({ ...positionOf(flowText, 'enum:', 'category:') });
    expect(enumOf.message).toContain('offers 48 values in one enum; model');
    expect(list).toMatchObject({ ...positionOf(flowText, 'minItems: 60') });
    expect(list.message).toContain('held lists of 40 and failed at 41 (measured 2026-11-30)');
    expect(list.hint).toMatch(/^split node "catalogue" into nodes that each ask for less, raise output\.retries in agents\/extractor\.yaml \(now 2\), or set output\.strict: true/);
  });

  it('prints the warnings positioned and counts them in the summary, exit 0', async () => {
    const io = captureIo();
    expect(await runCheck({ project: dir, env: KEY }, io)).toBe(0);
    const { line, col } = positionOf(flowText, 'minItems: 60');
    expect(io.stdout).toContain(`${FLOW_FILE}:${line}:${col}: warning W_SCHEMA_LIMIT the output schema of node "catalogue" asks for a list of at least 60 items (minItems)`);
    expect(io.stdout.trim().split('\n').pop()).toMatch(/, 0 errors, 3 warnings$/);
  });

  it('names a fallback model that falls short too', async () => {
    const other = copyShowcase();
    const file = join(other, '.aqven', 'aqven.db');
    const db = openDb(file);
    await measured(db, GPT_OSS, 'depth', 6);
    await closeDb(file);
    const io = captureIo();
    await runCheck({ project: other, json: true, env: KEY }, io);
    const out = JSON.parse(io.stdout) as { message: string; path: (string | number)[] }[];
    // the catalogue node's agent falls back to gpt-oss; the triage and long-answer agents' schemas fit
    expect(out).toHaveLength(1);
    expect(out[0].message).toContain(`fallback model "${GPT_OSS}" held depth 6 and failed at 7`);
    expect(out[0].path.at(-1)).toBe('bin');
  });

  it('never writes the database: its bytes and mtime are unchanged', async () => {
    const before = fileState(dbFile);
    await runCheck({ project: dir, env: KEY }, captureIo());
    await runCheck({ project: dir, json: true, env: KEY }, captureIo());
    expect(fileState(dbFile)).toEqual(before);
  });

  it('is silent without a database, and creates none', async () => {
    const bare = copyShowcase();
    const io = captureIo();
    expect(await runCheck({ project: bare, json: true, env: KEY }, io)).toBe(0);
    expect(JSON.parse(io.stdout)).toEqual([]);
    expect(existsSync(join(bare, '.aqven'))).toBe(false);
  });

  it('is silent with a database from before the limits table, and leaves it as it was', async () => {
    const old = copyShowcase();
    mkdirSync(join(old, '.aqven'));
    const file = join(old, '.aqven', 'aqven.db');
    const conn = new Database(file);
    conn.exec('create table runs (id text primary key)');
    conn.close();
    const before = fileState(file);
    const io = captureIo();
    expect(await runCheck({ project: old, json: true, env: KEY }, io)).toBe(0);
    expect(JSON.parse(io.stdout)).toEqual([]);
    expect(fileState(file)).toEqual(before);
  });

  it('is silent with a file that is no database', async () => {
    const junk = copyShowcase();
    mkdirSync(join(junk, '.aqven'));
    const file = join(junk, '.aqven', 'aqven.db');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'not a database'));
    const io = captureIo();
    expect(await runCheck({ project: junk, json: true, env: KEY }, io)).toBe(0);
    expect(JSON.parse(io.stdout)).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe('not a database');
  });
});

describe('aqven check W_SCHEMA_LIMIT (PostgreSQL, AQVEN_DATABASE_URL)', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb('pg');
    await seedShowcaseLimits(t.db);
  });
  afterAll(() => t.close());

  it('reads the limits from the database of AQVEN_DATABASE_URL', async () => {
    const io = captureIo();
    expect(await runCheck({ project: copyShowcase(), json: true, env: { ...KEY, AQVEN_DATABASE_URL: t.target } }, io)).toBe(0);
    const out = JSON.parse(io.stdout) as { code: string; path: (string | number)[] }[];
    expect(out.map((d) => [d.code, d.path.at(-1)])).toEqual([
      ['W_SCHEMA_LIMIT', 'shelf'],
      ['W_SCHEMA_LIMIT', 'enum'],
      ['W_SCHEMA_LIMIT', 'minItems'],
    ]);
  });
});
