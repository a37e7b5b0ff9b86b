// Waits until a run started in the background has ended (any status but running or queued) and
// gives its facts; the bound is a hang guard, not a timed assertion.
import { getRunFacts } from '@/db/queries';
import type { Db, RunFacts } from '@/db/types';

export async function runEnded(db: Db, id: string, ms = 30_000): Promise<RunFacts> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
    const f = await getRunFacts(db, id);
    if (f && f.status !== 'running' && f.status !== 'queued') return f;
  }
  throw new Error(`run ${id} did not end`);
}
