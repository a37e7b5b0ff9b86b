// Rate-limit pauses as other processes read them, on both dialects; the database is emptied of
// pauses before each test. The migration that capped old pauses is SQLite's only.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PauseOrigin } from '@/lib/engine/types';
import { DIALECTS, openTestDb, withTestDb, type TestDb } from '../test/helpers/dialects';
import { activePauses, clearPause } from './pause-queries';
import { runStore } from './run-store';
import type { Db } from './types';

const T0 = Date.UTC(2026, 0, 1);
const FAR = Date.UTC(9999, 11, 31, 23, 59, 59);
/** the origin the engine records for `retry-after: <year 9999>` under max_wait 60 s */
const capped: PauseOrigin = { setAt: T0, serverWait: 'retry-after: Fri, 31 Dec 9999 23:59:59 GMT', askedMs: FAR - T0, maxWaitMs: 60_000 };

describe.each(DIALECTS)('rate-limit pauses on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.rateLimitPauses);
    await runStore(db).refreshPauses(); // PostgreSQL: forget the pauses of the test before
  });

  it('stores a pause with its origin: when, the server wait as sent, the wait asked for and the max_wait that capped it', async () => {
    const s = runStore(db);
    s.setPause('openrouter:a', T0 + 60_000, 'HTTP 429 from openrouter:a', capped);
    await s.flush();
    expect(await activePauses(db, T0)).toEqual([{ model: 'openrouter:a', pausedUntil: T0 + 60_000, reason: 'HTTP 429 from openrouter:a', origin: capped }]);
    const p = db.t.rateLimitPauses;
    const [row] = await db.q.select({ set_at: p.setAt, server_wait: p.serverWait, asked_ms: p.askedMs, max_wait_ms: p.maxWaitMs }).from(p);
    expect(row).toEqual({ set_at: T0, server_wait: capped.serverWait, asked_ms: FAR - T0, max_wait_ms: 60_000 });
  });

  it('a later pause wins and brings its origin; an earlier one changes nothing', async () => {
    const s = runStore(db);
    const backoff: PauseOrigin = { setAt: T0 + 1000, serverWait: null, askedMs: 2000, maxWaitMs: 60_000 };
    s.setPause('openrouter:a', T0 + 60_000, 'HTTP 429 from openrouter:a', capped);
    s.setPause('openrouter:a', T0 + 3000, 'HTTP 429 again', backoff);
    await s.flush();
    expect((await activePauses(db, T0))[0]).toMatchObject({ pausedUntil: T0 + 60_000, reason: 'HTTP 429 from openrouter:a', origin: capped });
    s.setPause('openrouter:a', T0 + 90_000, 'HTTP 429 later', { ...backoff, setAt: T0 + 88_000 });
    await s.flush();
    expect((await activePauses(db, T0))[0]).toMatchObject({ pausedUntil: T0 + 90_000, reason: 'HTTP 429 later', origin: { setAt: T0 + 88_000, serverWait: null } });
  });

  it('lists only pauses not over yet, and reads a row without an origin as such', async () => {
    const s = runStore(db);
    s.setPause('openrouter:over', T0 + 10, '429', capped);
    s.setPause('openrouter:old', T0 + 5000, 'HTTP 429 from openrouter:old');
    await s.flush();
    expect(await activePauses(db, T0 + 10)).toEqual([{ model: 'openrouter:old', pausedUntil: T0 + 5000, reason: 'HTTP 429 from openrouter:old', origin: null }]);
  });

  it('clears a pause: the row is gone, for this process and every other', async () => {
    const s = runStore(db);
    s.setPause('openrouter:a', T0 + 60_000, '429', capped);
    s.setPause('openrouter:b', T0 + 60_000, '429', capped);
    await s.flush();
    expect(await clearPause(db, 'openrouter:a')).toBe(true);
    await s.refreshPauses(); // PostgreSQL's store re-reads the pauses (SQLite's reads the row on every getPause)
    expect(s.getPause('openrouter:a')).toBeNull();
    expect((await activePauses(db, T0)).map((p) => p.model)).toEqual(['openrouter:b']);
    expect(await clearPause(db, 'openrouter:a')).toBe(false);
  });
});

describe('rate-limit pauses on sqlite, migrated', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the migration caps a pause stored before the cap existed to 60 s from the upgrade', () => {
    if (t.db.dialect !== 'sqlite') throw new Error('a SQLite database was asked for');
    const db = t.db;
    db.$client.prepare('INSERT INTO rate_limit_pauses (model, paused_until, reason) VALUES (?, ?, ?), (?, ?, ?)').run('openrouter:far', FAR, '429', 'openrouter:near', T0, '429');
    const dir = join(__dirname, '..', 'drizzle');
    const file = readdirSync(dir).find((f) => f.endsWith('_pause_origin.sql'))!;
    const statements = readFileSync(join(dir, file), 'utf8').split('--> statement-breakpoint');
    const before = Date.now();
    db.$client.exec(statements.at(-1)!);
    const until = (m: string) => (db.$client.prepare('SELECT paused_until AS u FROM rate_limit_pauses WHERE model = ?').get(m) as { u: number }).u;
    expect(until('openrouter:far')).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 60_000);
    expect(until('openrouter:far')).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(until('openrouter:near')).toBe(T0);
  });
});
