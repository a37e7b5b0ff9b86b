import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PauseOrigin } from '@/lib/engine/types';
import { openDb } from './client';
import { activePauses, clearPause } from './pause-queries';
import { runStore } from './run-store';

function freshDb() {
  return openDb(join(mkdtempSync(join(tmpdir(), 'aqven-pauses-')), 'aqven.db'));
}

const T0 = Date.UTC(2026, 0, 1);
const FAR = Date.UTC(9999, 11, 31, 23, 59, 59);
/** the origin the engine records for `retry-after: <year 9999>` under max_wait 60 s */
const capped: PauseOrigin = { setAt: T0, serverWait: 'retry-after: Fri, 31 Dec 9999 23:59:59 GMT', askedMs: FAR - T0, maxWaitMs: 60_000 };

describe('rate-limit pauses', () => {
  it('stores a pause with its origin: when, the server wait as sent, the wait asked for and the max_wait that capped it', () => {
    const db = freshDb();
    runStore(db).setPause('openrouter:a', T0 + 60_000, 'HTTP 429 from openrouter:a', capped);
    expect(activePauses(db, T0)).toEqual([{ model: 'openrouter:a', pausedUntil: T0 + 60_000, reason: 'HTTP 429 from openrouter:a', origin: capped }]);
    const row = db.$client.prepare('SELECT set_at, server_wait, asked_ms, max_wait_ms FROM rate_limit_pauses').get();
    expect(row).toEqual({ set_at: T0, server_wait: capped.serverWait, asked_ms: FAR - T0, max_wait_ms: 60_000 });
  });

  it('a later pause wins and brings its origin; an earlier one changes nothing', () => {
    const db = freshDb();
    const s = runStore(db);
    const backoff: PauseOrigin = { setAt: T0 + 1000, serverWait: null, askedMs: 2000, maxWaitMs: 60_000 };
    s.setPause('openrouter:a', T0 + 60_000, 'HTTP 429 from openrouter:a', capped);
    s.setPause('openrouter:a', T0 + 3000, 'HTTP 429 again', backoff);
    expect(activePauses(db, T0)[0]).toMatchObject({ pausedUntil: T0 + 60_000, reason: 'HTTP 429 from openrouter:a', origin: capped });
    s.setPause('openrouter:a', T0 + 90_000, 'HTTP 429 later', { ...backoff, setAt: T0 + 88_000 });
    expect(activePauses(db, T0)[0]).toMatchObject({ pausedUntil: T0 + 90_000, reason: 'HTTP 429 later', origin: { setAt: T0 + 88_000, serverWait: null } });
  });

  it('lists only pauses not over yet, and reads a row without an origin as such', () => {
    const db = freshDb();
    const s = runStore(db);
    s.setPause('openrouter:over', T0 + 10, '429', capped);
    s.setPause('openrouter:old', T0 + 5000, 'HTTP 429 from openrouter:old');
    expect(activePauses(db, T0 + 10)).toEqual([{ model: 'openrouter:old', pausedUntil: T0 + 5000, reason: 'HTTP 429 from openrouter:old', origin: null }]);
  });

  it('clears a pause: the row is gone, for this process and every other', () => {
    const db = freshDb();
    const s = runStore(db);
    s.setPause('openrouter:a', T0 + 60_000, '429', capped);
    s.setPause('openrouter:b', T0 + 60_000, '429', capped);
    expect(clearPause(db, 'openrouter:a')).toBe(true);
    expect(s.getPause('openrouter:a')).toBeNull();
    expect(activePauses(db, T0).map((p) => p.model)).toEqual(['openrouter:b']);
    expect(clearPause(db, 'openrouter:a')).toBe(false);
  });

  it('the migration caps a pause stored before the cap existed to 60 s from the upgrade', () => {
    const db = freshDb();
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
