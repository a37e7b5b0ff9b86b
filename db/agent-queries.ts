// Outcome statistics per agent for the dashboard's /agents pages (DESIGN: The dashboard).
// Pure reads: no 'server-only', so the CLI may use them too.
import { and, count, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { roundCost } from '@/lib/engine/usage';
import type { Db } from './types';

export interface AgentStats {
  agent: string;
  /** node runs of this agent by status (pending, running, succeeded, failed, skipped) */
  nodes: Record<string, number>;
  nodesTotal: number;
  attempts: number;
  /** attempts by outcome (ok, error, refusal, truncated); attempts in flight are not counted */
  byOutcome: Record<string, number>;
  /** attempts by cause (provider_error, refusal, truncated, invalid_output) */
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

/** Statistics of every agent that ran (or only `agent`), ordered by name. */
export async function agentStats(db: Db, opts: { agent?: string } = {}): Promise<AgentStats[]> {
  const { attempts, nodeRuns } = db.t;
  const only = opts.agent ? eq(nodeRuns.agent, opts.agent) : undefined;
  const out = new Map<string, AgentStats>();
  const get = (agent: string) => {
    let s = out.get(agent);
    if (!s) out.set(agent, (s = blank(agent)));
    return s;
  };

  // PostgreSQL answers max() and sum() over bigint as strings: each is mapped to a number
  const nodeRows = await db.q
    .select({ agent: nodeRuns.agent, status: nodeRuns.status, n: count(), last: sql<number | null>`max(${nodeRuns.startedAt})`.mapWith(Number) })
    .from(nodeRuns)
    .where(only)
    .groupBy(nodeRuns.agent, nodeRuns.status);
  for (const r of nodeRows) {
    const s = get(r.agent);
    s.nodes[r.status] = r.n;
    s.nodesTotal += r.n;
    if (r.last != null) s.lastRunAt = Math.max(s.lastRunAt ?? 0, r.last);
  }

  const attemptRows = await db.q
    .select({
      agent: nodeRuns.agent,
      outcome: attempts.outcome,
      cause: attempts.cause,
      action: attempts.action,
      n: count(),
      inputTokens: sql<number>`sum(${attempts.inputTokens})`.mapWith(Number),
      outputTokens: sql<number>`sum(${attempts.outputTokens})`.mapWith(Number),
      costUsd: sql<number>`sum(${attempts.costUsd})`.mapWith(Number),
    })
    .from(attempts)
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .where(and(only, isNotNull(attempts.outcome)))
    .groupBy(nodeRuns.agent, attempts.outcome, attempts.cause, attempts.action);
  for (const r of attemptRows) {
    const s = get(r.agent);
    s.attempts += r.n;
    s.byOutcome[r.outcome!] = (s.byOutcome[r.outcome!] ?? 0) + r.n;
    if (r.cause) s.byCause[r.cause] = (s.byCause[r.cause] ?? 0) + r.n;
    const action = r.action ?? 'none';
    s.byAction[action] = (s.byAction[action] ?? 0) + r.n;
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

/** Attempts of one agent per model: which model of the chain does the failing. */
export async function agentModelStats(db: Db, agent: string): Promise<AgentModelStats[]> {
  const { attempts, nodeRuns } = db.t;
  const rows = await db.q
    .select({
      model: attempts.model,
      outcome: attempts.outcome,
      // a comparison is no number on PostgreSQL: counted by case
      invalid: sql<number>`sum(case when ${attempts.cause} = 'invalid_output' then 1 else 0 end)`.mapWith(Number),
      n: count(),
    })
    .from(attempts)
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .where(and(eq(nodeRuns.agent, agent), isNotNull(attempts.outcome)))
    .groupBy(attempts.model, attempts.outcome);
  const out = new Map<string, AgentModelStats>();
  for (const r of rows) {
    let m = out.get(r.model);
    if (!m) out.set(r.model, (m = { model: r.model, attempts: 0, byOutcome: {}, invalid: 0 }));
    m.attempts += r.n;
    m.byOutcome[r.outcome!] = r.n;
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

/** The agent's most recent failed node runs, newest first, to debug from. */
export async function recentAgentFailures(db: Db, agent: string, limit = 10): Promise<AgentFailure[]> {
  const { nodeRuns, runs } = db.t;
  return db.q
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
    .where(and(eq(nodeRuns.agent, agent), eq(nodeRuns.status, 'failed')))
    // newest first on both dialects (PostgreSQL would put a NULL start first), the id breaking ties
    .orderBy(sql`${nodeRuns.startedAt} desc nulls last`, desc(nodeRuns.id))
    .limit(limit);
}
