// Cancelling a queued run (DESIGN: Storage, "Workers and the queue"; CLI `aqven cancel`; the run
// page's Cancel button): only a run no worker has claimed yet. A compare-and-set `queued` →
// `cancelled` and the removal of its job commit together; a run already claimed, finished or
// cancelled is left as it is and the caller is told its status.
import { and, eq } from 'drizzle-orm';
import { transaction } from '@/db/tx';
import type { Db, PgDb, RunStatus } from '@/db/types';
import { removeRunJob } from '@/db/queue-jobs';

export type CancelResult =
  | { cancelled: true }
  /** `status` null: no run has that id */
  | { cancelled: false; status: RunStatus | null };

/** Cancels the run `runId` if it is still queued (its job removed in the same transaction). */
export async function cancelQueuedRun(db: PgDb, runId: string, now = Date.now()): Promise<CancelResult> {
  const { runs: r } = db.t;
  const cancelled = await transaction(db, async (q) => {
    const done = await q
      .update(r)
      .set({ status: 'cancelled', finishedAt: now })
      .where(and(eq(r.id, runId), eq(r.status, 'queued')))
      .returning({ id: r.id });
    if (done.length === 0) return false;
    await removeRunJob(q, runId);
    return true;
  });
  if (cancelled) return { cancelled: true };
  return { cancelled: false, status: await runStatus(db, runId) };
}

/** The run's status, or null when there is no such run. */
export async function runStatus(db: Db, runId: string): Promise<RunStatus | null> {
  const { runs: r } = db.t;
  const [row] = await db.q.select({ status: r.status }).from(r).where(eq(r.id, runId)).limit(1);
  return row?.status ?? null;
}
