// The Idempotency-Keys of `POST /api/runs` (DESIGN: The dashboard, "Calling AQVEN from a service"),
// per caller, on both dialects. A key is claimed by inserting its row: the primary key (caller,
// key) lets one of two concurrent requests in and the other finds the row — never a read then a
// write that both could pass. The claimer sets the run once it has started it, or drops the row
// when the start was refused. Rows go with their run (cascade) and with `aqven runs purge`.
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from './types';

export interface StoredKey {
  fingerprint: string;
  /** null while the request that claimed the key is starting its run */
  runId: string | null;
  createdAt: number;
}

/** Claims `key` for `caller`: true when this call inserted the row, false when one was there. */
export async function claimKey(db: Db, k: { caller: string; key: string; fingerprint: string; now: number }): Promise<boolean> {
  const t = db.t.idempotencyKeys;
  const rows = await db.q
    .insert(t)
    .values({ caller: k.caller, key: k.key, fingerprint: k.fingerprint, runId: null, createdAt: k.now })
    .onConflictDoNothing()
    .returning({ one: sql`1` });
  return rows.length === 1;
}

/** The row of `key` for `caller`, or null. */
export async function storedKey(db: Db, caller: string, key: string): Promise<StoredKey | null> {
  const t = db.t.idempotencyKeys;
  const [row] = await db.q
    .select({ fingerprint: t.fingerprint, runId: t.runId, createdAt: t.createdAt })
    .from(t)
    .where(and(eq(t.caller, caller), eq(t.key, key)))
    .limit(1);
  return row ?? null;
}

/** The run the claimed `key` started. */
export async function setKeyRun(db: Db, caller: string, key: string, runId: string): Promise<void> {
  const t = db.t.idempotencyKeys;
  await db.q
    .update(t)
    .set({ runId })
    .where(and(eq(t.caller, caller), eq(t.key, key)));
}

/** Deletes `key`'s row if it is still the one created at `createdAt` (an expired or abandoned claim, a refused start): true when it did. */
export async function dropKey(db: Db, caller: string, key: string, createdAt: number): Promise<boolean> {
  const t = db.t.idempotencyKeys;
  const rows = await db.q
    .delete(t)
    .where(and(eq(t.caller, caller), eq(t.key, key), eq(t.createdAt, createdAt)))
    .returning({ one: sql`1` });
  return rows.length === 1;
}

/** Deletes the keys created before `cutoff` (retention); `dryRun` counts them. */
export async function purgeKeys(db: Db, cutoff: number, o: { dryRun?: boolean } = {}): Promise<number> {
  const t = db.t.idempotencyKeys;
  if (o.dryRun) {
    const [row] = await db.q
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(t)
      .where(lt(t.createdAt, cutoff));
    return row?.n ?? 0;
  }
  return (
    await db.q
      .delete(t)
      .where(lt(t.createdAt, cutoff))
      .returning({ one: sql`1` })
  ).length;
}
