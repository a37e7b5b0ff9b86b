// Fixed-window request counters shared by every server process over one database (DESIGN: The
// dashboard, "Request checks"): sign-in attempts per account and per address, runs started per
// caller (lib/server/limits.ts decides the keys and limits). One row per key: when its window
// started and how many requests it has counted. A window starts at the first request after the
// last one ended, and lasts `windowMs`. Every count is one upsert, so no process loses another's.
import { eq, lte, sql } from 'drizzle-orm';
import { excluded } from './typed-sql';
import type { Db } from './types';

/** The longest window a limit may have; a row whose window started longer ago than this is over, whatever its length. */
export const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The share of hitLimit calls that also delete the windows long over (pruneLimits). */
export const PRUNE_CHANCE = 0.01;

export interface LimitWindow {
  /** requests allowed per window (0: none) */
  limit: number;
  /** the window's length, at most MAX_WINDOW_MS */
  windowMs: number;
}

export type LimitVerdict = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

function checkWindow(key: string, { limit, windowMs }: LimitWindow, now: number): void {
  if (!key) throw new RangeError('a request limit needs a key');
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a request limit must be a whole number ≥ 0, got ${limit}`);
  if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > MAX_WINDOW_MS)
    throw new RangeError(`a request limit's window must be 1..${MAX_WINDOW_MS} ms, got ${windowMs}`);
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

/** Forgets `key`'s window: its next request starts a new one (a successful sign-in clears its failures). */
export async function clearLimit(db: Db, key: string): Promise<void> {
  const { requestLimits: r } = db.t;
  await db.q.delete(r).where(eq(r.key, key));
}

/**
 * Deletes the windows that started MAX_WINDOW_MS or more before `now`: every one of them is over,
 * and a key's next request would start a new window anyway, so no answer changes. Returns how
 * many were deleted. hitLimit calls it now and then.
 */
export async function pruneLimits(db: Db, now: number): Promise<number> {
  const { requestLimits: r } = db.t;
  const gone = await db.q
    .delete(r)
    .where(lte(r.windowStart, now - MAX_WINDOW_MS))
    .returning({ key: r.key });
  return gone.length;
}
