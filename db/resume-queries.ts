// What a worker reads to resume a run it took over (DESIGN: Storage, "Leases"; lib/flow/resume.ts)
// beyond the run's facts (getRunFacts): the node_runs row of each node, so that an unfinished node
// restarts on its own row.
import { eq } from 'drizzle-orm';
import type { Db } from './types';

/** The node_runs ids of run `runId`, by node id. */
export async function nodeRunIdsOf(db: Db, runId: string): Promise<Map<string, string>> {
  const { nodeRuns } = db.t;
  const rows = await db.q.select({ id: nodeRuns.id, nodeId: nodeRuns.nodeId }).from(nodeRuns).where(eq(nodeRuns.runId, runId));
  return new Map(rows.map((r) => [r.nodeId, r.id]));
}
