// One agent over time, for the charts of /agents/[name] (DESIGN: The dashboard): its attempts in
// `flow` runs per UTC day from the daily sums (agent_daily; the primary key's (agent, day) prefix
// finds the window, so the read costs days × kinds of attempt, not the history), and the times
// its policy was saved (policy_revisions), to mark on the same axis.
// Pure reads: no 'server-only', so the CLI may use them too.
import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import { DAY_MS, utcDay } from './run-aggregates';
import type { Db } from './types';

/** Attempts of one day, of one kind (outcome, cause, action): summed over the agent's models. */
export interface AgentDayRow {
  /** start of the UTC day, ms */
  day: number;
  outcome: string;
  /** '' when the attempt had no cause */
  cause: string;
  /** 'none' when the policy did nothing after it */
  action: string;
  attempts: number;
  costUsd: number;
}

export interface AgentRevisionMark {
  revision: number;
  createdAt: number;
  author: string | null;
}

export interface AgentTimeline {
  /** the first day of the window (UTC midnight, ms) */
  from: number;
  /** the day after the last day of the window */
  to: number;
  rows: AgentDayRow[];
  /** policy saves inside the window, oldest first */
  revisions: AgentRevisionMark[];
}

/** The last `days` UTC days up to and including today (of `now`). */
export async function agentTimeline(db: Db, agent: string, opts: { now: number; days?: number }): Promise<AgentTimeline> {
  const days = Math.max(1, Math.floor(opts.days ?? 30));
  const to = utcDay(opts.now) + DAY_MS;
  const from = to - days * DAY_MS;
  const { agentDaily, policyRevisions } = db.t;
  // PostgreSQL answers sum() over bigint as a string: each is mapped to a number
  const rows = db.q
    .select({
      day: agentDaily.day,
      outcome: agentDaily.outcome,
      cause: agentDaily.cause,
      action: agentDaily.action,
      attempts: sql<number>`sum(${agentDaily.attempts})`.mapWith(Number),
      costUsd: sql<number>`sum(${agentDaily.costUsd})`.mapWith(Number),
    })
    .from(agentDaily)
    .where(and(eq(agentDaily.agent, agent), gte(agentDaily.day, from), lt(agentDaily.day, to)))
    .groupBy(agentDaily.day, agentDaily.outcome, agentDaily.cause, agentDaily.action)
    .orderBy(asc(agentDaily.day), asc(agentDaily.outcome), asc(agentDaily.cause), asc(agentDaily.action));
  const revisions = db.q
    .select({ revision: policyRevisions.revision, createdAt: policyRevisions.createdAt, author: policyRevisions.author })
    .from(policyRevisions)
    .where(and(eq(policyRevisions.agent, agent), gte(policyRevisions.createdAt, from), lt(policyRevisions.createdAt, to)))
    .orderBy(asc(policyRevisions.createdAt), asc(policyRevisions.revision));
  return { from, to, rows: (await rows).map((r) => ({ ...r, day: Number(r.day) })), revisions: (await revisions).map((r) => ({ ...r, createdAt: Number(r.createdAt) })) };
}
