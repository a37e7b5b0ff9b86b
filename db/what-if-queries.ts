// The history a what-if estimate replays (DESIGN: The dashboard, the agent page's what-if): an
// agent's last N finished nodes of flow runs (replays and limit probes are not its traffic), each
// with its attempts in order. Two bounded reads: the agent's own nodes newest first through
// node_runs_agent_started_idx (each node's run by its primary key, for its kind), their attempts
// through attempts_node_run_idx. Other agents' traffic is never walked.
// Pure reads: no 'server-only', so the CLI may use them too.
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { NodePolicy, Outcome } from '@/lib/engine/types';
import type { Db } from './types';

/** The most nodes one estimate reads: the window's upper bound, whatever the caller asks. */
export const WHAT_IF_MAX_NODES = 500;

export interface HistoryAttempt {
  seq: number;
  model: string;
  /** null: cut off without an outcome (its run stopped, its process died) */
  outcome: Outcome | null;
  cause: string | null;
  /** provider_error, transport, client_error, quota, not_sent, … (attempts.error_kind) */
  errorKind: string | null;
  costUsd: number;
  /** the attempt's own time, its transport tries and rate-limit waits included */
  durationMs: number;
}

export interface HistoryNode {
  id: string;
  runId: string;
  nodeId: string;
  status: 'succeeded' | 'failed';
  /** the policy the node ran under, as stored with it; null in nodes recorded before it was */
  policy: NodePolicy | null;
  /** the node's start, or its run's when it has none */
  startedAt: number;
  attempts: HistoryAttempt[];
}

/** The agent's last `limit` finished nodes of flow runs, newest first, each with its attempts in seq order. */
export async function agentNodeHistory(db: Db, agent: string, limit: number): Promise<HistoryNode[]> {
  const { attempts, nodeRuns, runs } = db.t;
  const n = Math.max(0, Math.min(Math.floor(limit), WHAT_IF_MAX_NODES));
  if (n === 0) return [];
  const nodes = await db.q
    .select({
      id: nodeRuns.id,
      runId: nodeRuns.runId,
      nodeId: nodeRuns.nodeId,
      status: nodeRuns.status,
      policy: nodeRuns.policy,
      startedAt: nodeRuns.startedAt,
      runStartedAt: runs.startedAt,
    })
    .from(nodeRuns)
    .innerJoin(runs, eq(runs.id, nodeRuns.runId))
    .where(and(eq(nodeRuns.agent, agent), eq(runs.kind, 'flow'), inArray(nodeRuns.status, ['succeeded', 'failed'])))
    // a node recorded before nodes had a start sorts last on both dialects (PostgreSQL's DESC would
    // put it first); ids break ties
    .orderBy(sql`${nodeRuns.startedAt} desc nulls last`, desc(nodeRuns.id))
    .limit(n);
  if (nodes.length === 0) return [];

  const rows = await db.q
    .select({
      nodeRunId: attempts.nodeRunId,
      seq: attempts.seq,
      model: attempts.model,
      outcome: attempts.outcome,
      cause: attempts.cause,
      errorKind: attempts.errorKind,
      costUsd: attempts.costUsd,
      startedAt: attempts.startedAt,
      finishedAt: attempts.finishedAt,
    })
    .from(attempts)
    .where(
      inArray(
        attempts.nodeRunId,
        nodes.map((r) => r.id),
      ),
    )
    .orderBy(attempts.nodeRunId, attempts.seq);

  const byNode = new Map<string, HistoryAttempt[]>();
  for (const r of rows) {
    let list = byNode.get(r.nodeRunId);
    if (!list) byNode.set(r.nodeRunId, (list = []));
    list.push({
      seq: r.seq,
      model: r.model,
      outcome: r.outcome,
      cause: r.cause,
      errorKind: r.errorKind,
      costUsd: r.costUsd,
      durationMs: Math.max(0, (r.finishedAt ?? r.startedAt) - r.startedAt),
    });
  }
  return nodes.map((r) => ({
    id: r.id,
    runId: r.runId,
    nodeId: r.nodeId,
    status: r.status as HistoryNode['status'],
    policy: (r.policy as NodePolicy | null) ?? null,
    startedAt: r.startedAt ?? r.runStartedAt,
    attempts: byNode.get(r.id) ?? [],
  }));
}
