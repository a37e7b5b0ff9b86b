// Alerts when a failure starts (docs/monitoring.md, "Alerts"; the rules: lib/observe/alerts/): the
// facts a rule reads — a finished run's failed nodes, an agent's nodes over the last minutes — and
// the `alerts` table, where an upsert decides which process fires a key (one alert per key per
// cool-down across every process of the database) and the delivery is recorded. Pure reads and
// small writes: no 'server-only', the CLI, the worker and the dashboard use them alike.
import { and, count, eq, exists, gte, inArray, lte, sql } from 'drizzle-orm';
import type { AlertRow } from './schema';
import { excluded } from './typed-sql';
import type { Db } from './types';

export type AlertRule = AlertRow['rule'];

/** An alert about to fire: what its row records. */
export interface AlertFiring {
  key: string;
  rule: AlertRule;
  agent?: string | null;
  model?: string | null;
  sig?: string | null;
  /** one line, as sent */
  summary: string;
}

/**
 * Fires `a.key` at `now` unless its cool-down is still running: true when this caller fires it
 * — the key is new, or its last firing's cool-down is over — and must send it; false when another
 * firing (of this process or another) holds it. One statement, atomic on both dialects: of
 * processes firing one key at once, exactly one gets true.
 */
export async function claimAlert(db: Db, a: AlertFiring, now: number, cooldownMs: number): Promise<boolean> {
  const { alerts: t } = db.t;
  const won = await db.q
    .insert(t)
    .values({
      key: a.key,
      rule: a.rule,
      agent: a.agent ?? null,
      model: a.model ?? null,
      sig: a.sig ?? null,
      summary: a.summary,
      firedAt: now,
      coolUntil: now + cooldownMs,
      timesFired: 1,
      status: 'fired',
      tries: 0,
      lastError: null,
      deliveredAt: null,
    })
    .onConflictDoUpdate({
      target: t.key,
      set: {
        rule: excluded(t.rule),
        agent: excluded(t.agent),
        model: excluded(t.model),
        sig: excluded(t.sig),
        summary: excluded(t.summary),
        firedAt: excluded(t.firedAt),
        coolUntil: excluded(t.coolUntil),
        timesFired: sql`${t.timesFired} + 1`,
        status: 'fired',
        tries: 0,
        lastError: null,
        deliveredAt: null,
      },
      // the cool-down is over once the proposed firing is at or past its end
      setWhere: lte(t.coolUntil, excluded(t.firedAt)),
    })
    .returning({ key: t.key });
  return won.length > 0;
}

/** The delivery of the firing of `key` at `firedAt` so far (a later firing of the key is left alone). */
export async function noteDelivery(
  db: Db,
  key: string,
  firedAt: number,
  d: { status: AlertRow['status']; tries: number; lastError: string | null; deliveredAt: number | null },
): Promise<void> {
  const { alerts: t } = db.t;
  await db.q
    .update(t)
    .set({ status: d.status, tries: d.tries, lastError: d.lastError, deliveredAt: d.deliveredAt })
    .where(and(eq(t.key, key), eq(t.firedAt, firedAt)));
}

/** An alert as /failures marks its group with it. */
export interface GroupAlert {
  firedAt: number;
  status: AlertRow['status'];
  timesFired: number;
  tries: number;
}

/** The new_failure alerts of these failure groups, by signature (the alerts_sig_idx). */
export async function groupAlerts(db: Db, sigs: string[]): Promise<Map<string, GroupAlert>> {
  const { alerts: t } = db.t;
  if (sigs.length === 0) return new Map();
  const rows = await db.q
    .select({ sig: t.sig, firedAt: t.firedAt, status: t.status, timesFired: t.timesFired, tries: t.tries })
    .from(t)
    .where(and(inArray(t.sig, sigs), eq(t.rule, 'new_failure')));
  return new Map(rows.map((r) => [r.sig!, { firedAt: Number(r.firedAt), status: r.status, timesFired: r.timesFired, tries: r.tries }]));
}

/** One alert's row, or null (tests, `aqven alerts`). */
export async function alertRow(db: Db, key: string): Promise<AlertRow | null> {
  const { alerts: t } = db.t;
  const [row] = await db.q.select().from(t).where(eq(t.key, key));
  return row ? { ...row, firedAt: Number(row.firedAt), coolUntil: Number(row.coolUntil), deliveredAt: row.deliveredAt === null ? null : Number(row.deliveredAt) } : null;
}

/** A failed node of a finished run, with its failure group's signature. */
export interface FailedNode {
  nodeId: string;
  agent: string;
  sig: string;
}

/** The failed nodes of run `runId` that carry a signature (node_runs_run_idx), in flow order. */
export async function failedNodesOfRun(db: Db, runId: string): Promise<FailedNode[]> {
  const { nodeRuns: n } = db.t;
  const rows = await db.q
    .select({ nodeId: n.nodeId, agent: n.agent, sig: n.failureSig })
    .from(n)
    .where(and(eq(n.runId, runId), eq(n.status, 'failed')))
    .orderBy(n.turn, n.ord);
  return rows.flatMap((r) => (r.sig ? [{ nodeId: r.nodeId, agent: r.agent, sig: r.sig }] : []));
}

/**
 * An agent's nodes of `flow` runs started at or after `since` that ended (succeeded or failed), and
 * how many of them failed: the failure_share rule's fraction (node_runs_agent_started_idx, the run's
 * kind by its primary key).
 */
export async function agentNodeOutcomes(db: Db, agent: string, since: number): Promise<{ finished: number; failed: number }> {
  const { nodeRuns: n, runs } = db.t;
  const flowRun = exists(
    db.q
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, n.runId), eq(runs.kind, 'flow'))),
  );
  const rows = await db.q
    .select({ status: n.status, n: count() })
    .from(n)
    .where(and(eq(n.agent, agent), gte(n.startedAt, since), inArray(n.status, ['succeeded', 'failed']), flowRun))
    .groupBy(n.status);
  let finished = 0;
  let failed = 0;
  for (const r of rows) {
    finished += Number(r.n);
    if (r.status === 'failed') failed += Number(r.n);
  }
  return { finished, failed };
}
