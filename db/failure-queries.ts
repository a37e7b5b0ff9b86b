// Failure groups for /failures (DESIGN: The dashboard, "Failure groups"): failed attempts and failed
// nodes of `flow` runs grouped by their signature (lib/shared/failure-signature.ts). Counts, spend
// and the trend come from failure_daily; the window's partial UTC days are counted exactly through
// the indexed failure_sig columns (failure_sig, started_at), and so are the examples — never a scan
// of attempts. Pure reads: no 'server-only', so the CLI and the replay may use them too.
import { and, asc, desc, eq, exists, gte, inArray, lt, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { roundCost } from '@/lib/engine/usage';
import { DAY_MS, utcDay } from './run-aggregates';
import type { Db } from './types';

export interface FailureGroup {
  sig: string;
  level: 'attempt' | 'node';
  agent: string;
  /** the attempt's model; '' for a node group (its message names the models) */
  model: string;
  /** an attempt group's cause, a node group's error code */
  code: string;
  /** the normalised failure text */
  message: string;
  /** failures in the window, exact to the millisecond */
  failures: number;
  /**
   * the group's part of the agent's calls over the UTC days the window touches: failed attempts /
   * the agent's finished attempts (attempt groups), failed nodes / the agent's finished nodes
   * (node groups); null when the agent has none counted
   */
  share: number | null;
  /** spend on the failed attempts (attempt groups) or on the failed nodes (node groups) in the window */
  costUsd: number;
  /** the first failure of this signature still in the history (it may precede the window) */
  firstAt: number;
  /** the newest failure of this signature */
  lastAt: number;
  /** failures per UTC day, oldest first, every day of the trend present (0 on a quiet day) */
  trend: { day: number; failures: number }[];
  /** the newest failed nodes of the group in the window, one per node run, newest first */
  examples: {
    runId: string;
    nodeRunId: string;
    nodeId: string;
    startedAt: number;
    /** the node failed and its run succeeded anyway: an on_fail route went around it */
    routedAround: boolean;
    /** attempt groups: the seq of the example's newest failed attempt of this signature (the run page's attempt anchor) */
    attemptSeq?: number;
  }[];
}

/** the days a group's trend shows at least: a one-day window still shows whether its failures are new */
export const TREND_MIN_DAYS = 7;

/** at most this many groups are read (the page shows the largest) */
const MAX_GROUPS = 500;

interface Totals {
  failures: number;
  costUsd: number;
  firstAt: number;
  lastAt: number;
}

interface Describe {
  sig: string;
  level: 'attempt' | 'node';
  agent: string;
  model: string;
  code: string;
  message: string;
}

/** The window's whole UTC days [from, to) and its partial days, each with the part of it inside the window. */
export function windowDays(since: number, until?: number): { full: { from: number; to: number | null } | null; partial: { day: number; from: number; to: number }[] } {
  const partial: { day: number; from: number; to: number }[] = [];
  const head = utcDay(since);
  const fromFull = since % DAY_MS === 0 ? since : head + DAY_MS;
  const toFull = until === undefined ? null : utcDay(until);
  if (since % DAY_MS !== 0) partial.push({ day: head, from: since, to: until === undefined ? head + DAY_MS : Math.min(until, head + DAY_MS) });
  // the day `until` falls in, unless the head already is that day
  if (toFull !== null && until! % DAY_MS !== 0 && !(since % DAY_MS !== 0 && toFull === head)) partial.push({ day: toFull, from: Math.max(toFull, since), to: until! });
  const full = toFull === null || fromFull < toFull ? { from: fromFull, to: toFull } : null;
  return { full, partial: partial.filter((p) => p.from < p.to) };
}

type Window = ReturnType<typeof windowDays>;

/**
 * Each signature's failures in the window: the whole days from the daily sums as they are, grouped
 * by signature alone (short sort keys), the partial days counted exactly. `described` learns the
 * partial days' signatures (the others are described from their history, for the groups kept).
 */
async function windowTotals(db: Db, { full, partial }: Window, byAgent: SQL | undefined, described: Map<string, Describe>): Promise<Map<string, Totals>> {
  const { failureDaily } = db.t;
  const totals = new Map<string, Totals>();
  const add = (sig: string, t: Totals) => {
    const s = totals.get(sig);
    if (!s) return void totals.set(sig, { ...t });
    s.failures += t.failures;
    s.costUsd += t.costUsd;
    s.firstAt = Math.min(s.firstAt, t.firstAt);
    s.lastAt = Math.max(s.lastAt, t.lastAt);
  };
  // PostgreSQL answers sums over bigint as strings
  if (full) {
    const rows = await db.q
      .select({
        sig: failureDaily.sig,
        failures: sql<number>`sum(${failureDaily.failures})`.mapWith(Number),
        costUsd: sql<number>`sum(${failureDaily.costUsd})`.mapWith(Number),
        firstAt: sql<number>`min(${failureDaily.firstAt})`.mapWith(Number),
        lastAt: sql<number>`max(${failureDaily.lastAt})`.mapWith(Number),
      })
      .from(failureDaily)
      .where(and(inRange(failureDaily.day, full.from, full.to), byAgent))
      .groupBy(failureDaily.sig);
    for (const r of rows) add(r.sig, r);
  }
  // a partial day: its signatures from the daily sums, their failures inside the window counted exactly
  for (const p of partial) {
    const rows = await db.q
      .select({ sig: failureDaily.sig, level: failureDaily.level, agent: failureDaily.agent, model: failureDaily.model, code: failureDaily.code, message: failureDaily.message })
      .from(failureDaily)
      .where(and(eq(failureDaily.day, p.day), byAgent));
    if (rows.length === 0) continue;
    for (const r of rows) described.set(r.sig, r);
    const exact = await exactCounts(
      db,
      rows.filter((r) => r.level === 'attempt').map((r) => r.sig),
      rows.filter((r) => r.level === 'node').map((r) => r.sig),
      p.from,
      p.to,
    );
    for (const [sig, t] of exact) add(sig, t);
  }
  return totals;
}

/** A signature as its group describes it, and its first failure still in the history. */
export type SignatureOrigin = Describe & { firstAt: number };

/**
 * Where each of the signatures `sigs` began: the first failure still in the history, from the
 * earliest day of each signature (the sums' primary key (sig, day) finds it without reading older
 * rows), with the signature's description. A signature none of whose days are kept is absent.
 */
export async function signatureOrigins(db: Db, sigs: string[]): Promise<Map<string, SignatureOrigin>> {
  const { failureDaily } = db.t;
  if (sigs.length === 0) return new Map();
  const earliest = await db.q
    .select({ sig: failureDaily.sig, day: sql<number>`min(${failureDaily.day})`.mapWith(Number) })
    .from(failureDaily)
    .where(inArray(failureDaily.sig, sigs))
    .groupBy(failureDaily.sig);
  const firstRows = earliest.length
    ? await db.q
        .select({
          sig: failureDaily.sig,
          level: failureDaily.level,
          agent: failureDaily.agent,
          model: failureDaily.model,
          code: failureDaily.code,
          message: failureDaily.message,
          firstAt: failureDaily.firstAt,
        })
        .from(failureDaily)
        .where(or(...earliest.map((e) => and(eq(failureDaily.sig, e.sig), eq(failureDaily.day, e.day)))))
    : [];
  return new Map(firstRows.map((r) => [r.sig, { ...r, firstAt: Number(r.firstAt) }]));
}

/**
 * The history of signatures `sigs`: their failures per day from `trendFrom` on (each signature
 * described by `described` if it was not yet), and first seen (signatureOrigins).
 */
async function signatureHistory(db: Db, sigs: string[], trendFrom: number, described: Map<string, Describe>) {
  const { failureDaily } = db.t;
  const [days, origins] = await Promise.all([
    db.q
      .select({
        sig: failureDaily.sig,
        level: failureDaily.level,
        agent: failureDaily.agent,
        model: failureDaily.model,
        code: failureDaily.code,
        message: failureDaily.message,
        day: failureDaily.day,
        failures: failureDaily.failures,
        lastAt: failureDaily.lastAt,
      })
      .from(failureDaily)
      .where(and(inArray(failureDaily.sig, sigs), gte(failureDaily.day, trendFrom)))
      .orderBy(asc(failureDaily.sig), asc(failureDaily.day)),
    signatureOrigins(db, sigs),
  ]);
  const firstSeen = new Map([...origins].map(([sig, o]) => [sig, o.firstAt]));
  const history = new Map<string, { lastAt: number; perDay: Map<number, number> }>();
  for (const d of days) {
    if (!described.has(d.sig)) described.set(d.sig, { sig: d.sig, level: d.level, agent: d.agent, model: d.model, code: d.code, message: d.message });
    let h = history.get(d.sig);
    if (!h) history.set(d.sig, (h = { lastAt: Number(d.lastAt), perDay: new Map() }));
    h.lastAt = Math.max(h.lastAt, Number(d.lastAt));
    h.perDay.set(Number(d.day), Number(d.failures));
  }
  return { firstSeen, history };
}

/**
 * The failure groups of `flow` runs in the window [since, until), largest first (then the newest):
 * at most `limit` (default 50), each with up to `examples` (default 3) example nodes.
 */
export async function failureGroups(
  db: Db,
  opts: { since: number; until?: number; agent?: string; limit?: number; examples?: number } = { since: Date.now() - DAY_MS },
): Promise<FailureGroup[]> {
  const limit = Math.max(1, Math.min(opts.limit ?? 50, MAX_GROUPS));
  const perGroup = Math.max(0, Math.min(opts.examples ?? 3, 20));
  const window = windowDays(opts.since, opts.until);
  const { full, partial } = window;
  const described = new Map<string, Describe>();
  const totals = await windowTotals(db, window, opts.agent ? eq(db.t.failureDaily.agent, opts.agent) : undefined, described);
  const ranked = [...totals]
    .filter(([, t]) => t.failures > 0)
    .sort(([sa, a], [sb, b]) => b.failures - a.failures || b.lastAt - a.lastAt || sa.localeCompare(sb))
    .slice(0, limit);
  if (ranked.length === 0) return [];

  // the trend's days, then first seen
  const trendTo = utcDay(opts.until === undefined ? Math.max(Date.now(), opts.since) : opts.until - 1);
  const trendFrom = Math.min(utcDay(opts.since), trendTo - (TREND_MIN_DAYS - 1) * DAY_MS);
  const { firstSeen, history } = await signatureHistory(
    db,
    ranked.map(([sig]) => sig),
    trendFrom,
    described,
  );
  const shares = await shareDenominators(db, [...new Set(ranked.map(([sig]) => described.get(sig)!.agent))], full, partial);
  const windowDaysOf = (day: number) => (full !== null && day >= full.from && (full.to === null || day < full.to)) || partial.some((p) => p.day === day);

  const out: FailureGroup[] = [];
  for (const [sig, t] of ranked) {
    const d = described.get(sig)!;
    const h = history.get(sig);
    const trend: FailureGroup['trend'] = [];
    for (let day = trendFrom; day <= trendTo; day += DAY_MS) trend.push({ day, failures: h?.perDay.get(day) ?? 0 });
    // the share compares like with like: this group's failures and the agent's calls on the same whole days
    let dayFailures = 0;
    for (const [day, n] of h?.perDay ?? []) if (windowDaysOf(day)) dayFailures += n;
    const calls = shares.get(d.agent)?.[d.level] ?? 0;
    out.push({
      ...d,
      failures: t.failures,
      share: calls > 0 ? Math.min(1, dayFailures / calls) : null,
      costUsd: roundCost(t.costUsd),
      firstAt: Math.min(firstSeen.get(sig) ?? t.firstAt, t.firstAt),
      lastAt: Math.max(h?.lastAt ?? t.lastAt, t.lastAt),
      trend,
      examples: [],
    });
  }
  if (perGroup > 0) {
    const examples = await Promise.all(out.map((g) => groupExamples(db, g, { since: opts.since, until: opts.until, limit: perGroup })));
    out.forEach((g, i) => (g.examples = examples[i]!));
  }
  return out;
}

/**
 * "the row's run is a flow run", as a lookup of that one run: a join would let the planner walk
 * every flow run (runs_kind_idx) instead of the few failures the failure_sig index finds.
 */
function ofFlowRun(db: Db, runId: SQL | typeof db.t.attempts.runId | typeof db.t.nodeRuns.runId): SQL {
  const { runs } = db.t;
  return exists(
    db.q
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, runId), eq(runs.kind, 'flow'))),
  );
}

/** Failures of these signatures in [from, to) of flow runs, counted through the failure_sig indexes. */
async function exactCounts(db: Db, attemptSigs: string[], nodeSigs: string[], from: number, to: number): Promise<Map<string, Totals>> {
  const { attempts, nodeRuns } = db.t;
  const out = new Map<string, Totals>();
  const agg = <C extends typeof attempts.startedAt | typeof nodeRuns.startedAt>(started: C, cost: SQL) => ({
    n: sql<number>`count(*)`.mapWith(Number),
    cost: sql<number>`sum(${cost})`.mapWith(Number),
    first: sql<number>`min(${started})`.mapWith(Number),
    last: sql<number>`max(${started})`.mapWith(Number),
  });
  if (attemptSigs.length) {
    const rows = await db.q
      .select({ sig: attempts.failureSig, ...agg(attempts.startedAt, sql`${attempts.costUsd}`) })
      .from(attempts)
      .where(and(inArray(attempts.failureSig, attemptSigs), inRange(attempts.startedAt, from, to), ofFlowRun(db, attempts.runId)))
      .groupBy(attempts.failureSig);
    for (const r of rows) out.set(r.sig!, { failures: r.n, costUsd: r.cost ?? 0, firstAt: r.first, lastAt: r.last });
  }
  if (nodeSigs.length) {
    const rows = await db.q
      .select({ sig: nodeRuns.failureSig, ...agg(nodeRuns.startedAt, sql`${nodeRuns.costUsd}`) })
      .from(nodeRuns)
      .where(and(inArray(nodeRuns.failureSig, nodeSigs), inRange(nodeRuns.startedAt, from, to), ofFlowRun(db, nodeRuns.runId)))
      .groupBy(nodeRuns.failureSig);
    for (const r of rows) out.set(r.sig!, { failures: r.n, costUsd: r.cost ?? 0, firstAt: r.first, lastAt: r.last });
  }
  return out;
}

/** Each agent's finished attempts and finished nodes over the days the window touches (the daily sums). */
async function shareDenominators(
  db: Db,
  agents: string[],
  full: { from: number; to: number | null } | null,
  partial: { day: number }[],
): Promise<Map<string, { attempt: number; node: number }>> {
  const { agentDaily, nodeDaily } = db.t;
  const out = new Map<string, { attempt: number; node: number }>(agents.map((a) => [a, { attempt: 0, node: 0 }]));
  if (agents.length === 0) return out;
  const daysOf = (col: typeof agentDaily.day | typeof nodeDaily.day) => {
    const parts: SQL[] = [];
    if (full) parts.push(inRange(col, full.from, full.to));
    if (partial.length)
      parts.push(
        inArray(
          col,
          partial.map((p) => p.day),
        ),
      );
    return parts.length === 1 ? parts[0]! : sql`(${sql.join(parts, sql` or `)})`;
  };
  const [calls, nodes] = await Promise.all([
    db.q
      .select({ agent: agentDaily.agent, n: sql<number>`sum(${agentDaily.attempts})`.mapWith(Number) })
      .from(agentDaily)
      .where(and(inArray(agentDaily.agent, agents), daysOf(agentDaily.day)))
      .groupBy(agentDaily.agent),
    db.q
      .select({ agent: nodeDaily.agent, n: sql<number>`sum(${nodeDaily.nodes})`.mapWith(Number) })
      .from(nodeDaily)
      .where(and(inArray(nodeDaily.agent, agents), inArray(nodeDaily.status, ['succeeded', 'failed']), daysOf(nodeDaily.day)))
      .groupBy(nodeDaily.agent),
  ]);
  for (const r of calls) out.get(r.agent)!.attempt = r.n;
  for (const r of nodes) out.get(r.agent)!.node = r.n;
  return out;
}

/** `from <= col < to`, open-ended when there is no `to` */
function inRange(col: SQLWrapper, from: number, to: number | null | undefined): SQL {
  return to == null ? gte(col, from) : and(gte(col, from), lt(col, to))!;
}

/** The newest failed nodes of one group in the window, one per node run (the failure_sig index, newest first). */
async function groupExamples(db: Db, g: { sig: string; level: 'attempt' | 'node' }, w: { since: number; until?: number; limit: number }): Promise<FailureGroup['examples']> {
  const { attempts, nodeRuns, runs } = db.t;
  const routed = sql<number>`case when ${runs.status} = 'succeeded' and ${nodeRuns.status} = 'failed' then 1 else 0 end`.mapWith(Number);
  if (g.level === 'node') {
    const rows = await db.q
      .select({ runId: nodeRuns.runId, nodeRunId: nodeRuns.id, nodeId: nodeRuns.nodeId, startedAt: nodeRuns.startedAt, routed })
      .from(nodeRuns)
      .innerJoin(runs, eq(runs.id, nodeRuns.runId))
      .where(and(eq(nodeRuns.failureSig, g.sig), inRange(nodeRuns.startedAt, w.since, w.until), eq(runs.kind, 'flow')))
      .orderBy(desc(nodeRuns.startedAt), desc(nodeRuns.id))
      .limit(w.limit);
    return rows.map((r) => ({ runId: r.runId, nodeRunId: r.nodeRunId, nodeId: r.nodeId, startedAt: Number(r.startedAt), routedAround: r.routed === 1 }));
  }
  // a node retried into the same failure has several such attempts: read a few more, keep one per node
  const rows = await db.q
    .select({ runId: attempts.runId, nodeRunId: attempts.nodeRunId, nodeId: nodeRuns.nodeId, startedAt: attempts.startedAt, seq: attempts.seq, routed })
    .from(attempts)
    .innerJoin(runs, eq(runs.id, attempts.runId))
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .where(and(eq(attempts.failureSig, g.sig), inRange(attempts.startedAt, w.since, w.until), eq(runs.kind, 'flow')))
    .orderBy(desc(attempts.startedAt), desc(attempts.id))
    .limit(w.limit * 4);
  const seen = new Set<string>();
  const out: FailureGroup['examples'] = [];
  for (const r of rows) {
    if (seen.has(r.nodeRunId) || out.length >= w.limit) continue;
    seen.add(r.nodeRunId);
    out.push({ runId: r.runId, nodeRunId: r.nodeRunId, nodeId: r.nodeId, startedAt: Number(r.startedAt), routedAround: r.routed === 1, attemptSeq: r.seq });
  }
  return out;
}

/** The level of a signature, from its daily sums; null when none is kept. */
async function levelOf(db: Db, sig: string): Promise<'attempt' | 'node' | null> {
  const { failureDaily } = db.t;
  const [row] = await db.q.select({ level: failureDaily.level }).from(failureDaily).where(eq(failureDaily.sig, sig)).limit(1);
  return row?.level ?? null;
}

/** failed node runs of one group, newest first: for a node group the failed nodes; for an attempt group the nodes that had such an attempt */
export async function failureGroupNodes(
  db: Db,
  sig: string,
  opts: { since: number; limit: number },
): Promise<{ runId: string; nodeRunId: string; nodeId: string; agent: string; flow: string; startedAt: number }[]> {
  const { attempts, nodeRuns, runs } = db.t;
  const limit = Math.max(1, Math.min(opts.limit, 1000));
  const level = await levelOf(db, sig);
  const columns = { runId: nodeRuns.runId, nodeRunId: nodeRuns.id, nodeId: nodeRuns.nodeId, agent: nodeRuns.agent, flow: runs.flow };
  if (level !== 'attempt') {
    const rows = await db.q
      .select({ ...columns, startedAt: nodeRuns.startedAt })
      .from(nodeRuns)
      .innerJoin(runs, eq(runs.id, nodeRuns.runId))
      .where(and(eq(nodeRuns.failureSig, sig), gte(nodeRuns.startedAt, opts.since), eq(runs.kind, 'flow')))
      .orderBy(desc(nodeRuns.startedAt), desc(nodeRuns.id))
      .limit(limit);
    if (rows.length || level === 'node') return rows.map((r) => ({ ...r, startedAt: Number(r.startedAt) }));
  }
  // one row per node run, at its newest attempt of the signature
  const newest = sql<number>`max(${attempts.startedAt})`.mapWith(Number);
  const rows = await db.q
    .select({ ...columns, startedAt: newest })
    .from(attempts)
    .innerJoin(runs, eq(runs.id, attempts.runId))
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .where(and(eq(attempts.failureSig, sig), gte(attempts.startedAt, opts.since), eq(runs.kind, 'flow')))
    .groupBy(nodeRuns.runId, nodeRuns.id, nodeRuns.nodeId, nodeRuns.agent, runs.flow)
    .orderBy(desc(newest), desc(nodeRuns.id))
    .limit(limit);
  return rows;
}

/** The agents that have failure groups in the window (for the page's agent filter): the daily sums' day index. */
export async function failureAgents(db: Db, since: number = Date.now() - DAY_MS): Promise<string[]> {
  const { failureDaily } = db.t;
  const rows = await db.q
    .selectDistinct({ agent: failureDaily.agent })
    .from(failureDaily)
    .where(gte(failureDaily.day, utcDay(since)))
    .orderBy(asc(failureDaily.agent));
  return rows.map((r) => r.agent);
}
