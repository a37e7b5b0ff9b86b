// Fixed-window request counters on both dialects, with an injected clock and random; the table is
// emptied before each test. Concurrent callers are other connections to the same database (on
// PostgreSQL, pools whose requests truly overlap).
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '../test/helpers/dialects';
import { MAX_WINDOW_MS, MEMO_MS, clearLimit, hitLimit, pruneLimits, refundLimit, remember, remembered } from './request-limits';
import type { Db } from './types';

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const never = () => 1; // the random that never prunes
const W = { limit: 3, windowMs: MINUTE };

describe.each(DIALECTS)('request limits on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });
  beforeEach(async () => {
    await db.q.delete(db.t.requestLimits);
  });

  const stored = async () => (await db.q.select().from(db.t.requestLimits)).sort((a, b) => a.key.localeCompare(b.key));

  it('counts requests in the window and refuses past the limit, saying how long until the window ends', async () => {
    expect(await hitLimit(db, 'login:user:ana', W, T0, never)).toEqual({ ok: true, remaining: 2 });
    expect(await hitLimit(db, 'login:user:ana', W, T0 + 10_000, never)).toEqual({ ok: true, remaining: 1 });
    expect(await hitLimit(db, 'login:user:ana', W, T0 + 20_000, never)).toEqual({ ok: true, remaining: 0 });
    expect(await hitLimit(db, 'login:user:ana', W, T0 + 45_000, never)).toEqual({ ok: false, retryAfterMs: 15_000 });
    expect(await hitLimit(db, 'login:user:ana', W, T0 + MINUTE - 1, never)).toEqual({ ok: false, retryAfterMs: 1 });
    // the window started with the first request, not with the refused ones
    expect(await stored()).toEqual([{ key: 'login:user:ana', windowStart: T0, count: 4 }]);
  });

  it('starts a new window at the first request once the last one has ended', async () => {
    for (let i = 0; i < 4; i++) await hitLimit(db, 'k', W, T0 + i, never);
    expect(await hitLimit(db, 'k', W, T0 + MINUTE, never)).toEqual({ ok: true, remaining: 2 });
    expect(await stored()).toEqual([{ key: 'k', windowStart: T0 + MINUTE, count: 1 }]);
    // a long silence: the next request starts its window then, not on a fixed grid
    const later = T0 + 10 * MINUTE + 123;
    expect(await hitLimit(db, 'k', W, later, never)).toEqual({ ok: true, remaining: 2 });
    for (let i = 0; i < 2; i++) await hitLimit(db, 'k', W, later + 1, never);
    expect(await hitLimit(db, 'k', W, later + 1000, never)).toEqual({ ok: false, retryAfterMs: MINUTE - 1000 });
  });

  it('keeps each key apart, and a limit of 0 refuses every request', async () => {
    for (let i = 0; i < 3; i++) await hitLimit(db, 'a', W, T0, never);
    expect((await hitLimit(db, 'a', W, T0, never)).ok).toBe(false);
    expect(await hitLimit(db, 'b', W, T0, never)).toEqual({ ok: true, remaining: 2 });
    expect(await hitLimit(db, 'c', { limit: 0, windowMs: MINUTE }, T0, never)).toEqual({ ok: false, retryAfterMs: MINUTE });
  });

  it('a burst of refused requests does not grow the stored count past limit + 1', async () => {
    for (let i = 0; i < 50; i++) await hitLimit(db, 'flood', W, T0 + i, never);
    expect(await stored()).toEqual([{ key: 'flood', windowStart: T0, count: 4 }]);
  });

  it("never asks a caller to wait longer than one window (another process's clock ahead of ours)", async () => {
    for (let i = 0; i < 3; i++) await hitLimit(db, 'skew', W, T0 + 5000, never);
    expect(await hitLimit(db, 'skew', W, T0, never)).toEqual({ ok: false, retryAfterMs: MINUTE });
  });

  it('clearLimit forgets the window: the next request starts afresh', async () => {
    for (let i = 0; i < 4; i++) await hitLimit(db, 'login:user:ana', W, T0, never);
    await hitLimit(db, 'login:addr:10.0.0.7', W, T0, never);
    await clearLimit(db, 'login:user:ana');
    expect(await hitLimit(db, 'login:user:ana', W, T0 + 1, never)).toEqual({ ok: true, remaining: 2 });
    expect((await stored()).map((r) => [r.key, r.count])).toEqual([
      ['login:addr:10.0.0.7', 1],
      ['login:user:ana', 1],
    ]);
    await clearLimit(db, 'no-such-key'); // nothing to forget: no error
  });

  it('pruneLimits deletes the windows that started MAX_WINDOW_MS ago or more, and only those', async () => {
    const now = T0 + 2 * MAX_WINDOW_MS;
    await hitLimit(db, 'old', W, now - MAX_WINDOW_MS - 1, never);
    await hitLimit(db, 'edge', { limit: 3, windowMs: MAX_WINDOW_MS }, now - MAX_WINDOW_MS, never); // ends now: over
    await hitLimit(db, 'day-long', { limit: 3, windowMs: MAX_WINDOW_MS }, now - MAX_WINDOW_MS + 1, never); // 1 ms left
    await hitLimit(db, 'fresh', W, now - 1, never);
    expect(await pruneLimits(db, now)).toBe(2);
    expect((await stored()).map((r) => r.key)).toEqual(['day-long', 'fresh']);
    expect(await pruneLimits(db, now)).toBe(0);
  });

  it('hitLimit prunes on a small share of its calls (the random it is given)', async () => {
    await hitLimit(db, 'old', W, T0, never);
    const now = T0 + MAX_WINDOW_MS;
    await hitLimit(db, 'new', W, now, () => 0.5);
    expect((await stored()).map((r) => r.key)).toEqual(['new', 'old']);
    expect(await hitLimit(db, 'new', W, now, () => 0.001)).toEqual({ ok: true, remaining: 1 });
    expect((await stored()).map((r) => r.key)).toEqual(['new']);
  });

  it('refundLimit gives back one request of the window that counted it, never below 0', async () => {
    for (let i = 0; i < 3; i++) await hitLimit(db, 'k', W, T0 + i, never);
    await refundLimit(db, 'k', T0 + 2);
    expect(await hitLimit(db, 'k', W, T0 + 3, never)).toEqual({ ok: true, remaining: 0 });
    for (let i = 0; i < 5; i++) await refundLimit(db, 'k', T0 + 3);
    expect(await stored()).toEqual([{ key: 'k', windowStart: T0, count: 0 }]);
    // a window that started after the request was counted never held it: left alone
    await hitLimit(db, 'k', W, T0 + MINUTE, never);
    await refundLimit(db, 'k', T0 + 3);
    expect(await stored()).toEqual([{ key: 'k', windowStart: T0 + MINUTE, count: 1 }]);
    await refundLimit(db, 'no-such-key', T0); // nothing to give back: no error
  });

  it('remember keeps a memo for MEMO_MS after it was last written, apart from the counters, and pruning keeps it that long', async () => {
    await remember(db, 'login:known:ana@192.0.2.1', T0);
    expect(await remembered(db, 'login:known:ana@192.0.2.1', T0 + MEMO_MS - 1)).toBe(true);
    expect(await remembered(db, 'login:known:ana@192.0.2.1', T0 + MEMO_MS)).toBe(false);
    expect(await remembered(db, 'login:known:bo@192.0.2.1', T0)).toBe(false);
    // written again: the time starts again (an older write does not set it back)
    await remember(db, 'login:known:ana@192.0.2.1', T0 + MEMO_MS);
    await remember(db, 'login:known:ana@192.0.2.1', T0);
    expect(await remembered(db, 'login:known:ana@192.0.2.1', T0 + MEMO_MS + 1)).toBe(true);
    // a counter cannot be a memo
    await expect(hitLimit(db, 'memo:login:known:ana@192.0.2.1', W, T0, never)).rejects.toThrow(RangeError);
    // pruning: counters after a day, memos after MEMO_MS
    await remember(db, 'old', T0);
    await hitLimit(db, 'counter', W, T0, never);
    expect(await pruneLimits(db, T0 + MAX_WINDOW_MS)).toBe(1);
    expect((await stored()).map((r) => r.key)).toEqual(['memo:login:known:ana@192.0.2.1', 'memo:old']);
    expect(await pruneLimits(db, T0 + MEMO_MS)).toBe(1);
    expect((await stored()).map((r) => r.key)).toEqual(['memo:login:known:ana@192.0.2.1']);
  });

  it('refuses a key, limit, window or time it cannot count', async () => {
    await expect(hitLimit(db, '', W, T0)).rejects.toThrow(RangeError);
    for (const w of [
      { limit: -1, windowMs: MINUTE },
      { limit: 1.5, windowMs: MINUTE },
      { limit: 3, windowMs: 0 },
      { limit: 3, windowMs: MAX_WINDOW_MS + 1 },
      { limit: 3, windowMs: Number.NaN },
    ])
      await expect(hitLimit(db, 'k', w, T0), JSON.stringify(w)).rejects.toThrow(RangeError);
    await expect(hitLimit(db, 'k', W, Number.NaN)).rejects.toThrow(RangeError);
    expect(await stored()).toEqual([]);
  });

  it('loses no count when several processes hit one key at once', async () => {
    const others = [otherProcess(t), otherProcess(t)];
    try {
      const dbs = [db, ...others.map((o) => o.db)];
      const limit = 10;
      // a fresh key: the first requests race to insert its row
      const verdicts = await Promise.all(Array.from({ length: 24 }, (_, i) => hitLimit(dbs[i % dbs.length], 'runs:token:busy', { limit, windowMs: MINUTE }, T0, never)));
      const allowed = verdicts.filter((v) => v.ok).map((v) => (v.ok ? v.remaining : -1));
      expect(allowed.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(verdicts.filter((v) => !v.ok)).toHaveLength(14);
      expect(await stored()).toEqual([{ key: 'runs:token:busy', windowStart: T0, count: limit + 1 }]);

      // and when the window turns over under them, exactly one window starts
      const next = T0 + 2 * MINUTE;
      const turned = await Promise.all(Array.from({ length: 12 }, (_, i) => hitLimit(dbs[i % dbs.length], 'runs:token:busy', { limit, windowMs: MINUTE }, next, never)));
      expect(turned.filter((v) => v.ok)).toHaveLength(10);
      expect(await stored()).toEqual([{ key: 'runs:token:busy', windowStart: next, count: limit + 1 }]);
    } finally {
      for (const o of others) await o.close();
    }
  });
});
