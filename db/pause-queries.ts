// The rate-limit pauses other processes see (DESIGN: Transport retry and rate limits, The
// dashboard): read for /providers with their origin, and cleared there by an editor. The engine
// writes them through the run store (db/run-store.ts, setPause), committed on the spot.
import { asc, eq, gt } from 'drizzle-orm';
import type { PauseOrigin } from '@/lib/engine/types';
import type { RateLimitPauseRow } from './schema';
import type { Db } from './types';

export interface StoredPause {
  model: string;
  pausedUntil: number;
  reason: string;
  /** null for a row written before origins were recorded */
  origin: PauseOrigin | null;
}

function toPause(r: RateLimitPauseRow): StoredPause {
  const origin: PauseOrigin | null =
    r.setAt !== null && r.askedMs !== null && r.maxWaitMs !== null ? { setAt: r.setAt, serverWait: r.serverWait, askedMs: r.askedMs, maxWaitMs: r.maxWaitMs } : null;
  return { model: r.model, pausedUntil: r.pausedUntil, reason: r.reason, origin };
}

/** Pauses not over at `now`, by model. */
export async function activePauses(db: Db, now = Date.now()): Promise<StoredPause[]> {
  const { rateLimitPauses } = db.t;
  return (await db.q.select().from(rateLimitPauses).where(gt(rateLimitPauses.pausedUntil, now)).orderBy(asc(rateLimitPauses.model))).map(toPause);
}

/** Deletes the model's pause; returns whether there was one (over or not). */
export async function clearPause(db: Db, model: string): Promise<boolean> {
  const { rateLimitPauses } = db.t;
  const gone = await db.q.delete(rateLimitPauses).where(eq(rateLimitPauses.model, model)).returning({ model: rateLimitPauses.model });
  return gone.length > 0;
}
