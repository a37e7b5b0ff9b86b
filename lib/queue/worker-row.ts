// A worker's row in `workers` (DESIGN: Storage, "Workers and the queue"; `aqven db status` lists the
// rows seen in the last minute): written when the worker starts, its `seen_at` and `running`
// updated every heartbeat, `stopped_at` set when it exits. Its id is the worker's PROCESS_OWNER, the
// id its runs' leases name (`runs.owner`).
import { eq } from 'drizzle-orm';
import { hostname } from 'node:os';
import type { Db } from '@/db/types';

export interface WorkerIdentity {
  id: string;
  concurrency: number;
}

export async function registerWorker(db: Db, w: WorkerIdentity, now = Date.now()): Promise<void> {
  const { workers } = db.t;
  await db.q.insert(workers).values({ id: w.id, host: hostname(), pid: process.pid, concurrency: w.concurrency, running: 0, startedAt: now, seenAt: now });
}

export async function beatWorker(db: Db, id: string, running: number, now = Date.now()): Promise<void> {
  const { workers } = db.t;
  await db.q.update(workers).set({ seenAt: now, running }).where(eq(workers.id, id));
}

export async function stopWorkerRow(db: Db, id: string, now = Date.now()): Promise<void> {
  const { workers } = db.t;
  await db.q.update(workers).set({ seenAt: now, running: 0, stoppedAt: now }).where(eq(workers.id, id));
}
