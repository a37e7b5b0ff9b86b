// Reads behind a replay (DESIGN: The dashboard, "Replay with the current policy"): what kind of run
// a run is and what it replayed, the replays of a run, and the cost history a replay's estimate is
// made from. Pure reads over both dialects: no 'server-only', so the CLI may use them too.
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Db, RunStatus } from './types';

export interface ReplayLink {
  kind: 'flow' | 'replay' | 'limits';
  /** the run a replay re-ran a node of; null for another kind, or once that run was purged */
  replayOf: string | null;
  replayNode: string | null;
}

/** The kind of run `runId` and what it replayed; null when there is no such run. */
export async function replayLink(db: Db, runId: string): Promise<ReplayLink | null> {
  const { runs } = db.t;
  const [row] = await db.q.select({ kind: runs.kind, replayOf: runs.replayOf, replayNode: runs.replayNode }).from(runs).where(eq(runs.id, runId)).limit(1);
  return row ?? null;
}

export interface ReplaySummary {
  id: string;
  node: string | null;
  status: RunStatus;
  costUsd: number;
  startedAt: number;
  startedBy: string | null;
}

/** The replays of run `runId`, newest first (at most `limit`), through runs_replay_of_idx. */
export async function replaysOf(db: Db, runId: string, limit = 20): Promise<ReplaySummary[]> {
  const { runs } = db.t;
  return db.q
    .select({ id: runs.id, node: runs.replayNode, status: runs.status, costUsd: runs.costUsd, startedAt: runs.startedAt, startedBy: runs.startedBy })
    .from(runs)
    .where(and(eq(runs.replayOf, runId), eq(runs.kind, 'replay')))
    .orderBy(desc(runs.startedAt), desc(runs.id))
    .limit(Math.max(1, Math.min(limit, 200)));
}

export interface AgentCostHistory {
  /** finished nodes of flow runs read (at most the limit asked) */
  nodes: number;
  /** their mean cost; 0 when there are none */
  avgCostUsd: number;
}

/** The mean cost of the agent's last `limit` finished nodes in flow runs (replays and probes are not its traffic). */
export async function agentCostHistory(db: Db, agent: string, limit = 100): Promise<AgentCostHistory> {
  const { nodeRuns, runs } = db.t;
  const rows = await db.q
    .select({ cost: nodeRuns.costUsd })
    .from(runs)
    .innerJoin(nodeRuns, and(eq(nodeRuns.agent, agent), eq(nodeRuns.runId, runs.id)))
    .where(and(eq(runs.kind, 'flow'), inArray(nodeRuns.status, ['succeeded', 'failed'])))
    .orderBy(desc(runs.startedAt), desc(runs.id), desc(nodeRuns.id))
    .limit(Math.max(1, Math.min(limit, 500)));
  const total = rows.reduce((s, r) => s + Number(r.cost), 0);
  return { nodes: rows.length, avgCostUsd: rows.length ? total / rows.length : 0 };
}
