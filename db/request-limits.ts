// Fixed-window request counters shared by every server process over one database (DESIGN: The
// dashboard, "Request checks"): failed sign-ins per account and address, per address and in all,
// runs started per caller (lib/server/limits.ts decides the keys and limits). One row per key: when
// its window started and how many requests it has counted. A window starts at the first request
// after the last one ended, and lasts `windowMs`. Every count is one upsert, so no process loses
// another's. The same table keeps memos (`memo:` keys): facts remembered for MEMO_MS, such as an
// address a user signed in from.
import { and, eq, gt, lte, notLike, or, sql } from 'drizzle-orm';
import { excluded } from './typed-sql';
import type { Db } from './types';

/** The longest window a limit may have; a row whose window started longer ago than this is over, whatever its length. */
export const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The share of hitLimit calls that also delete the windows long over (pruneLimits). */
export const PRUNE_CHANCE = 0.01;
/** Keys under this prefix are memos (remember), never counters; pruneLimits keeps them MEMO_MS. */
export const MEMO_PREFIX = 'memo:';
/** How long a memo lasts after it was last written: 90 days. */
export const MEMO_MS = 90 * 24 * 60 * 60 * 1000;

export interface LimitWindow {
  /** requests allowed per window (0: none) */
  limit: number;
  /** the window's length, at most MAX_WINDOW_MS */
  windowMs: number;
}

export type LimitVerdict = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

function checkWindow(key: string, { limit, windowMs }: LimitWindow, now: number): void {
  if (!key) throw new RangeError('a request limit needs a key');
  if (key.startsWith(MEMO_PREFIX)) throw new RangeError(`a request limit's key may not start with "${MEMO_PREFIX}" (memos live there)`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a request limit must be a whole number ≥ 0, got ${limit}`);
  if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > MAX_WINDOW_MS) throw new RangeError(`a request limit's window must be 1..${MAX_WINDOW_MS} ms, got ${windowMs}`);
  if (!Number.isSafeInteger(now)) throw new RangeError(`the time must be whole milliseconds, got ${now}`);
}

/**
 * Counts one request under `key` at `now` and answers whether it is within the limit: how many
 * more the window allows, or how long until it ends. The count and the window's turnover are one
 * INSERT … ON CONFLICT DO UPDATE, which both dialects apply atomically under concurrent callers.
 * Refused requests keep counting, up to limit + 1 (the stored count stays bounded). About one call
 * in a hundred (`random`) also prunes the windows long over, so the table stays small.
 */
export async function hitLimit(db: Db, key: string, window: LimitWindow, now: number, random: () => number = Math.random): Promise<LimitVerdict> {
  checkWindow(key, window, now);
  const { limit, windowMs } = window;
  const { requestLimits: r } = db.t;
  const start = excluded(r.windowStart); // this request's time, as the insert proposed it
  const over = sql`${r.windowStart} <= ${start} - ${windowMs}`;
  const [row] = await db.q
    .insert(r)
    .values({ key, windowStart: now, count: 1 })
    .onConflictDoUpdate({
      target: r.key,
      set: {
        windowStart: sql`CASE WHEN ${over} THEN ${start} ELSE ${r.windowStart} END`,
        count: sql`CASE WHEN ${over} THEN 1 WHEN ${r.count} > ${limit} THEN ${r.count} ELSE ${r.count} + 1 END`,
      },
    })
    .returning({ windowStart: r.windowStart, count: r.count });
  if (random() < PRUNE_CHANCE) await pruneLimits(db, now);
  if (row.count <= limit) return { ok: true, remaining: limit - row.count };
  // another process's clock may run ahead of ours: never ask for more than one window
  return { ok: false, retryAfterMs: Math.min(windowMs, Math.max(1, row.windowStart + windowMs - now)) };
}

/** Forgets `key`'s window: its next request starts a new one. */
export async function clearLimit(db: Db, key: string): Promise<void> {
  const { requestLimits: r } = db.t;
  await db.q.delete(r).where(eq(r.key, key));
}

/**
 * Gives back one request that hitLimit counted at `countedAt` and allowed: a sign-in is counted
 * before its password is checked (so callers racing each other cannot all pass the check) and
 * given back when it succeeds. A window that started after `countedAt` never held that request,
 * so it is left alone; a count never goes below 0.
 */
export async function refundLimit(db: Db, key: string, countedAt: number): Promise<void> {
  const { requestLimits: r } = db.t;
  await db.q
    .update(r)
    .set({ count: sql`${r.count} - 1` })
    .where(and(eq(r.key, key), lte(r.windowStart, countedAt), gt(r.count, 0)));
}

/** Remembers `key` as of `now` for MEMO_MS (a later call starts the time again); see remembered. */
export async function remember(db: Db, key: string, now: number): Promise<void> {
  const { requestLimits: r } = db.t;
  await db.q
    .insert(r)
    .values({ key: MEMO_PREFIX + key, windowStart: now, count: 1 })
    .onConflictDoUpdate({
      target: r.key,
      set: { windowStart: sql`CASE WHEN ${r.windowStart} > ${excluded(r.windowStart)} THEN ${r.windowStart} ELSE ${excluded(r.windowStart)} END` },
    });
}

/** Whether `key` was remembered less than MEMO_MS before `now`. */
export async function remembered(db: Db, key: string, now: number): Promise<boolean> {
  const { requestLimits: r } = db.t;
  const found = await db.q
    .select({ key: r.key })
    .from(r)
    .where(and(eq(r.key, MEMO_PREFIX + key), gt(r.windowStart, now - MEMO_MS)))
    .limit(1);
  return found.length > 0;
}

/**
 * Deletes the windows that started MAX_WINDOW_MS or more before `now`: every one of them is over,
 * and a key's next request would start a new window anyway, so no answer changes; and the memos
 * written MEMO_MS or more before `now`. Returns how many rows were deleted. hitLimit calls it now
 * and then.
 */
export async function pruneLimits(db: Db, now: number): Promise<number> {
  const { requestLimits: r } = db.t;
  const gone = await db.q
    .delete(r)
    .where(or(and(lte(r.windowStart, now - MAX_WINDOW_MS), notLike(r.key, `${MEMO_PREFIX}%`)), lte(r.windowStart, now - MEMO_MS)))
    .returning({ key: r.key });
  return gone.length;
}
