// The usage of cut-off answers, looked up from the provider afterwards (DESIGN: Usage unknown,
// never zero): the tries waiting for a lookup, their claim, and what a lookup found, applied once
// to the try, its attempt, node and run and — for `flow` runs — the daily sums the run store keeps
// (db/run-aggregates.ts). The HTTP side is lib/flow/usage-lookup.ts.
import { and, asc, count, eq, gte, inArray, isNull, lte, min, ne, notInArray, or, sql } from 'drizzle-orm';
import type { UsageTotals } from '@/lib/engine/types';
import { budgetCaller } from '@/lib/shared/spend-budget';
import { utcDay } from './run-aggregates';
import { addSpend } from './spend-queries';
import { transaction } from './tx';
import { LIVE_RUN_STATUSES, type Db } from './types';

/** A try whose reply was cut off after a 2xx, waiting for its usage to be looked up. */
export interface DueLookup {
  tryId: number;
  attemptId: string;
  runId: string;
  /** the attempt's model string, `provider:model-id` */
  model: string;
  generationId: string;
  /** lookups claimed so far */
  lookupCount: number;
  /** when the try ended: the age of the lookup counts from it */
  finishedAt: number;
}

/** runs still writing their own sums */

/**
 * Tries due for a lookup at `now`, oldest due first: pending, due, and of a run that is over — a
 * run in progress still writes its own sums whole when it finishes, which would undo an addition.
 */
/** `idPrefix`: only the generations whose id begins so (a simulated process asks its simulator about the simulator's only) */
export async function dueLookups(db: Db, o: { now: number; limit: number; runId?: string; idPrefix?: string }): Promise<DueLookup[]> {
  const { transportTries: t, attempts: a, runs: r } = db.t;
  const rows = await db.q
    .select({ tryId: t.id, attemptId: t.attemptId, runId: a.runId, model: a.model, generationId: t.generationId, lookupCount: t.lookupCount, finishedAt: t.finishedAt })
    .from(t)
    .innerJoin(a, eq(a.id, t.attemptId))
    .innerJoin(r, eq(r.id, a.runId))
    .where(
      and(
        eq(t.usageLookup, 'pending'),
        lte(t.lookupAfter, o.now),
        notInArray(r.status, LIVE_RUN_STATUSES),
        o.runId === undefined ? undefined : eq(a.runId, o.runId),
        o.idPrefix === undefined ? undefined : sql`substr(${t.generationId}, 1, ${o.idPrefix.length}) = ${o.idPrefix}`,
      ),
    )
    .orderBy(asc(t.lookupAfter), asc(t.id))
    .limit(o.limit);
  return rows.map((row) => ({ ...row, generationId: row.generationId ?? '' }));
}

/**
 * Claims a due lookup for this process until `holdUntil` (a conditional UPDATE: of two processes
 * looking up together, one wins; a claim whose process died lapses at `holdUntil`). True: ours.
 */
export async function claimLookup(db: Db, l: DueLookup, o: { now: number; holdUntil: number }): Promise<boolean> {
  const { transportTries: t } = db.t;
  const won = await db.q
    .update(t)
    .set({ lookupCount: l.lookupCount + 1, lookupAfter: o.holdUntil })
    .where(and(eq(t.id, l.tryId), eq(t.usageLookup, 'pending'), eq(t.lookupCount, l.lookupCount), lte(t.lookupAfter, o.now)))
    .returning({ id: t.id });
  return won.length === 1;
}

/** the claim of `l` as this process made it (claimLookup): its count went up by one */
const claimed = (db: Db, l: DueLookup) => {
  const { transportTries: t } = db.t;
  return and(eq(t.id, l.tryId), eq(t.usageLookup, 'pending'), eq(t.lookupCount, l.lookupCount + 1));
};

/** The provider had no stats yet (or could not answer): pending again, due at `after`. */
export async function lookUpLater(db: Db, l: DueLookup, after: number): Promise<void> {
  const { transportTries: t } = db.t;
  await db.q.update(t).set({ lookupAfter: after }).where(claimed(db, l));
}

/** No more lookups for this try: its usage stays unknown. */
export async function lookupGaveUp(db: Db, l: DueLookup): Promise<void> {
  const { transportTries: t } = db.t;
  await db.q.update(t).set({ usageLookup: 'gave_up', lookupAfter: null }).where(claimed(db, l));
}

/**
 * What the provider billed for the cut-off reply, applied in one transaction, once (the claim is
 * checked again): the try gets it and `found`; its attempt's, node's and run's tokens and cost grow
 * by it; the attempt's usage_unknown clears when it got an outcome (not cut off by a stopped run)
 * and none of its tries is still unknown. A `flow` run's daily sums grow alike: agent_daily for the
 * attempt's key, failure_daily's cost for the attempt's and the node's failure signatures; the
 * spend of the run's caller too, whatever its kind (caller_spend: "Spend budgets"). False:
 * another process applied it, or the claim lapsed.
 */
export async function applyFoundUsage(db: Db, l: DueLookup, u: UsageTotals): Promise<boolean> {
  const { transportTries: t, attempts: a, nodeRuns: n, runs: r, agentDaily: ad, failureDaily: fd } = db.t;
  return transaction(db, async (q) => {
    const took = await q
      .update(t)
      .set({ usageLookup: 'found', lookupAfter: null, inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd: u.costUsd })
      .where(claimed(db, l))
      .returning({ id: t.id });
    if (took.length !== 1) return false;
    const [att] = await q
      .select({
        id: a.id,
        nodeRunId: a.nodeRunId,
        runId: a.runId,
        model: a.model,
        outcome: a.outcome,
        cause: a.cause,
        action: a.action,
        startedAt: a.startedAt,
        finishedAt: a.finishedAt,
        failureSig: a.failureSig,
        usageUnknown: a.usageUnknown,
      })
      .from(a)
      .where(eq(a.id, l.attemptId));
    if (!att) return true;
    // the tries still unknown: a 2xx reply that failed (cut off), its usage not found
    const [left] = await q
      .select({ n: count() })
      .from(t)
      .where(and(eq(t.attemptId, att.id), gte(t.status, 200), lte(t.status, 299), sql`${t.error} is not null`, or(isNull(t.usageLookup), ne(t.usageLookup, 'found'))));
    const stillUnknown = att.outcome === null || Number(left?.n ?? 0) > 0;
    const grow = { inputTokens: sql`${a.inputTokens} + ${u.inputTokens}`, outputTokens: sql`${a.outputTokens} + ${u.outputTokens}`, costUsd: sql`${a.costUsd} + ${u.costUsd}` };
    await q
      .update(a)
      .set({ ...grow, usageUnknown: att.usageUnknown && stillUnknown })
      .where(eq(a.id, att.id));
    await q
      .update(n)
      .set({ inputTokens: sql`${n.inputTokens} + ${u.inputTokens}`, outputTokens: sql`${n.outputTokens} + ${u.outputTokens}`, costUsd: sql`${n.costUsd} + ${u.costUsd}` })
      .where(eq(n.id, att.nodeRunId));
    await q
      .update(r)
      .set({ inputTokens: sql`${r.inputTokens} + ${u.inputTokens}`, outputTokens: sql`${r.outputTokens} + ${u.outputTokens}`, costUsd: sql`${r.costUsd} + ${u.costUsd}` })
      .where(eq(r.id, att.runId));
    const [run] = await q.select({ kind: r.kind, startedBy: r.startedBy }).from(r).where(eq(r.id, att.runId));
    // the caller's spend grows alike, on the day the run store counted the attempt (db/spend-queries.ts)
    const caller = budgetCaller(run?.startedBy);
    if (caller) await addSpend(db, q, caller, u.costUsd, att.finishedAt ?? l.finishedAt);
    if (run?.kind !== 'flow') return true;
    const [node] = await q.select({ agent: n.agent, startedAt: n.startedAt, finishedAt: n.finishedAt, failureSig: n.failureSig }).from(n).where(eq(n.id, att.nodeRunId));
    if (!node) return true;
    // the daily rows the run store summed the attempt and its node into (db/run-aggregates.ts DailySums)
    const day = utcDay(att.startedAt);
    if (att.outcome !== null) {
      await q
        .update(ad)
        .set({ inputTokens: sql`${ad.inputTokens} + ${u.inputTokens}`, outputTokens: sql`${ad.outputTokens} + ${u.outputTokens}`, costUsd: sql`${ad.costUsd} + ${u.costUsd}` })
        .where(
          and(eq(ad.agent, node.agent), eq(ad.day, day), eq(ad.model, att.model), eq(ad.outcome, att.outcome), eq(ad.cause, att.cause ?? ''), eq(ad.action, att.action ?? 'none')),
        );
    }
    if (att.failureSig)
      await q
        .update(fd)
        .set({ costUsd: sql`${fd.costUsd} + ${u.costUsd}` })
        .where(and(eq(fd.sig, att.failureSig), eq(fd.day, day)));
    const nodeAt = node.startedAt ?? node.finishedAt;
    if (node.failureSig && nodeAt !== null) {
      await q
        .update(fd)
        .set({ costUsd: sql`${fd.costUsd} + ${u.costUsd}` })
        .where(and(eq(fd.sig, node.failureSig), eq(fd.day, utcDay(nodeAt))));
    }
    return true;
  });
}

/**
 * Every lookup of run `runId` still pending, given up (its usage stays unknown); how many. Claims
 * held by another process are taken over: this is for a run nobody else can look up (a simulated one).
 */
export async function giveUpRunLookups(db: Db, runId: string): Promise<number> {
  const { transportTries: t, attempts: a } = db.t;
  const gone = await db.q
    .update(t)
    .set({ usageLookup: 'gave_up', lookupAfter: null })
    .where(and(eq(t.usageLookup, 'pending'), inArray(t.attemptId, db.q.select({ id: a.id }).from(a).where(eq(a.runId, runId)))))
    .returning({ id: t.id });
  return gone.length;
}

/** How many lookups wait (in `runIds`, or anywhere), and when the next is due (null: none waits). */
export async function pendingLookups(db: Db, runIds?: readonly string[]): Promise<{ pending: number; nextAt: number | null }> {
  const { transportTries: t, attempts: a } = db.t;
  if (runIds && runIds.length === 0) return { pending: 0, nextAt: null };
  const [row] = await db.q
    .select({ n: count(), next: min(t.lookupAfter).mapWith(Number) })
    .from(t)
    .innerJoin(a, eq(a.id, t.attemptId))
    .where(and(eq(t.usageLookup, 'pending'), runIds ? inArray(a.runId, [...runIds]) : undefined));
  const pending = Number(row?.n ?? 0);
  return { pending, nextAt: pending && row?.next != null ? Number(row.next) : null };
}
