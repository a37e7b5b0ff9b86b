// Outcome statistics per agent for the dashboard's /agents pages (DESIGN: The dashboard), of `flow`
// runs only (a replay or a limits probe is no evidence of how an agent does in production). Read
// from the daily sums the run store keeps (DESIGN: Storage, "Notes, search and daily statistics").
// Pure reads: no 'server-only', so the CLI may use them too.
import { and, count, desc, eq, inArray, notInArray, sql } from 'drizzle-orm';
import { roundCost } from '@/lib/engine/usage';
import type { Db } from './types';

export interface AgentStats {
  agent: string;
  /** node runs of this agent in flow runs by status: succeeded, failed, skipped (the sums); pending, running (in running runs) */
  nodes: Record<string, number>;
  nodesTotal: number;
  attempts: number;
  /** attempts by outcome (ok, error, refusal, truncated); attempts in flight or cut off (no outcome) are not counted */
  byOutcome: Record<string, number>;
  /** attempts by cause (provider_error, refusal, truncated, invalid_output, quota) */
  byCause: Record<string, number>;
  /** attempts by action (retry, fallback, repair, none) */
  byAction: Record<string, number>;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  lastRunAt: number | null;
}

function blank(agent: string): AgentStats {
  return { agent, nodes: {}, nodesTotal: 0, attempts: 0, byOutcome: {}, byCause: {}, byAction: {}, inputTokens: 0, outputTokens: 0, costUsd: 0, lastRunAt: null };
}

/**
 * Statistics of every agent that ran in `flow` runs (or only `agent`), ordered by name. Finished
 * nodes and attempts come from the daily sums (node_daily, agent_daily: the run store keeps them as
 * facts are written), so the cost of this read grows with agents × days, not with the history;
 * nodes still pending or running are counted live, from the running runs only.
 */
export async function agentStats(db: Db, opts: { agent?: string } = {}): Promise<AgentStats[]> {
  const { agentDaily, nodeDaily, nodeRuns, runs } = db.t;
  const out = new Map<string, AgentStats>();
  const get = (agent: string) => {
    let s = out.get(agent);
    if (!s) out.set(agent, (s = blank(agent)));
    return s;
  };

  // PostgreSQL answers max() and sum() over bigint as strings: each is mapped to a number
  const finished = db.q
    .select({
      agent: nodeDaily.agent,
      status: nodeDaily.status,
      n: sql<number>`sum(${nodeDaily.nodes})`.mapWith(Number),
      last: sql<number | null>`max(${nodeDaily.lastStartedAt})`.mapWith(Number),
    })
    .from(nodeDaily)
    .where(opts.agent ? eq(nodeDaily.agent, opts.agent) : undefined)
    .groupBy(nodeDaily.agent, nodeDaily.status);
  // runs_status_idx finds the running runs, node_runs_run_idx their nodes: no scan of the history.
  // The kind and the agent are tested on the few rows found: in the WHERE, either would lead
  // SQLite (no statistics) to start from runs_kind_idx or node_runs_agent_idx and read the history.
  const live = (
    await db.q
      .select({ agent: nodeRuns.agent, status: nodeRuns.status, kind: runs.kind, n: count(), last: sql<number | null>`max(${nodeRuns.startedAt})`.mapWith(Number) })
      .from(runs)
      .innerJoin(nodeRuns, eq(nodeRuns.runId, runs.id))
      .where(and(eq(runs.status, 'running'), inArray(nodeRuns.status, ['pending', 'running'])))
      .groupBy(nodeRuns.agent, nodeRuns.status, runs.kind)
  ).filter((r) => r.kind === 'flow' && (!opts.agent || r.agent === opts.agent));
  for (const r of [...(await finished), ...live]) {
    const s = get(r.agent);
    s.nodes[r.status] = (s.nodes[r.status] ?? 0) + r.n;
    s.nodesTotal += r.n;
    if (r.last != null) s.lastRunAt = Math.max(s.lastRunAt ?? 0, r.last);
  }

  const attemptRows = await db.q
    .select({
      agent: agentDaily.agent,
      outcome: agentDaily.outcome,
      cause: agentDaily.cause,
      action: agentDaily.action,
      n: sql<number>`sum(${agentDaily.attempts})`.mapWith(Number),
      inputTokens: sql<number>`sum(${agentDaily.inputTokens})`.mapWith(Number),
      outputTokens: sql<number>`sum(${agentDaily.outputTokens})`.mapWith(Number),
      costUsd: sql<number>`sum(${agentDaily.costUsd})`.mapWith(Number),
    })
    .from(agentDaily)
    .where(opts.agent ? eq(agentDaily.agent, opts.agent) : undefined)
    .groupBy(agentDaily.agent, agentDaily.outcome, agentDaily.cause, agentDaily.action);
  for (const r of attemptRows) {
    const s = get(r.agent);
    s.attempts += r.n;
    s.byOutcome[r.outcome] = (s.byOutcome[r.outcome] ?? 0) + r.n;
    // '' in the sums: the attempt had no cause
    if (r.cause) s.byCause[r.cause] = (s.byCause[r.cause] ?? 0) + r.n;
    s.byAction[r.action] = (s.byAction[r.action] ?? 0) + r.n;
    s.inputTokens += Number(r.inputTokens ?? 0);
    s.outputTokens += Number(r.outputTokens ?? 0);
    s.costUsd += Number(r.costUsd ?? 0);
  }
  for (const s of out.values()) s.costUsd = roundCost(s.costUsd);
  return [...out.values()].sort((a, b) => a.agent.localeCompare(b.agent));
}

export interface AgentModelStats {
  model: string;
  attempts: number;
  byOutcome: Record<string, number>;
  invalid: number;
}

/** Attempts of one agent per model, in `flow` runs (the daily sums): which model of the chain does the failing. */
export async function agentModelStats(db: Db, agent: string): Promise<AgentModelStats[]> {
  const { agentDaily } = db.t;
  const rows = await db.q
    .select({
      model: agentDaily.model,
      outcome: agentDaily.outcome,
      // a comparison is no number on PostgreSQL: counted by case
      invalid: sql<number>`sum(case when ${agentDaily.cause} = 'invalid_output' then ${agentDaily.attempts} else 0 end)`.mapWith(Number),
      n: sql<number>`sum(${agentDaily.attempts})`.mapWith(Number),
    })
    .from(agentDaily)
    .where(eq(agentDaily.agent, agent))
    .groupBy(agentDaily.model, agentDaily.outcome);
  const out = new Map<string, AgentModelStats>();
  for (const r of rows) {
    let m = out.get(r.model);
    if (!m) out.set(r.model, (m = { model: r.model, attempts: 0, byOutcome: {}, invalid: 0 }));
    m.attempts += r.n;
    m.byOutcome[r.outcome] = r.n;
    m.invalid += Number(r.invalid ?? 0);
  }
  return [...out.values()].sort((a, b) => b.attempts - a.attempts || a.model.localeCompare(b.model));
}

export interface AgentFailure {
  runId: string;
  flow: string;
  nodeId: string;
  errorCode: string | null;
  errorMessage: string | null;
  startedAt: number | null;
}

/**
 * The agent's most recent failed node runs of `flow` runs, newest first, to debug from. Found
 * through their failure signatures (the agent's node-level ones in failure_daily, then
 * node_runs_failure_idx), not by reading every node run of the agent.
 */
export async function recentAgentFailures(db: Db, agent: string, limit = 10): Promise<AgentFailure[]> {
  const { failureDaily, nodeRuns, runs } = db.t;
  const sigs = db.q
    .select({ sig: failureDaily.sig })
    .from(failureDaily)
    .where(and(eq(failureDaily.level, 'node'), eq(failureDaily.agent, agent)));
  return (
    db.q
      .select({
        runId: nodeRuns.runId,
        flow: runs.flow,
        nodeId: nodeRuns.nodeId,
        errorCode: nodeRuns.errorCode,
        errorMessage: nodeRuns.errorMessage,
        startedAt: nodeRuns.startedAt,
      })
      .from(nodeRuns)
      .innerJoin(runs, eq(runs.id, nodeRuns.runId))
      // the signatures name the agent (an agent test here would lead SQLite to read node_runs_agent_idx);
      // flow runs said as "not the others" (`kind = 'flow'` would lead it to start from runs_kind_idx)
      .where(and(inArray(nodeRuns.failureSig, sigs), eq(nodeRuns.status, 'failed'), notInArray(runs.kind, ['replay', 'limits'])))
      // newest first on both dialects (PostgreSQL would put a NULL start first), the id breaking ties
      .orderBy(sql`${nodeRuns.startedAt} desc nulls last`, desc(nodeRuns.id))
      .limit(limit)
  );
}
