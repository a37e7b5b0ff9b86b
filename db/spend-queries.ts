// What each caller's runs spent per UTC day, against their daily budget (DESIGN: The dashboard,
// "Spend budgets"): the one home of `caller_spend`'s reads and of the budget check every door and
// every attempt goes through. The spend itself is added where attempts' cost is committed — the
// run store (db/run-store.ts), and a usage lookup that finds more (db/usage-lookup-queries.ts) —
// by the upsert below, which adds under concurrent writers on both dialects.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { budgetRefusal, budgetSpent, spendDay, type BudgetRefusal } from '@/lib/shared/spend-budget';
import { listAudit, recordAuditOrWarn } from './audit-queries';
import { excluded } from './typed-sql';
import type { Db, Orm, Tables } from './types';

/** `INSERT … ON CONFLICT (caller, day) DO UPDATE SET usd = usd + excluded.usd`: no process loses another's spend. */
export function callerSpendUpsert(t: Tables) {
  const s = t.callerSpend;
  return { target: [s.caller, s.day], set: { usd: sql`${s.usd} + ${excluded(s.usd)}` } };
}

/** Adds `usd` to `caller`'s spend on the UTC day of `at`, through `q` (a transaction's, or the database's). */
export async function addSpend(db: Db, q: Orm, caller: string, usd: number, at: number): Promise<void> {
  if (!(usd > 0)) return;
  await q
    .insert(db.t.callerSpend)
    .values({ caller, day: spendDay(at), usd })
    .onConflictDoUpdate(callerSpendUpsert(db.t));
}

/** The daily budget of `caller` (a user's name, `token:<name>`): null when it has none, or is no user or token. */
export async function callerBudget(db: Db, caller: string): Promise<number | null> {
  if (caller.startsWith('token:')) {
    const t = db.t.apiTokens;
    const [row] = await db.q
      .select({ usd: t.budgetUsdPerDay })
      .from(t)
      .where(eq(t.name, caller.slice('token:'.length)))
      .limit(1);
    return row?.usd ?? null;
  }
  const u = db.t.users;
  const [row] = await db.q.select({ usd: u.budgetUsdPerDay }).from(u).where(eq(u.name, caller)).limit(1);
  return row?.usd ?? null;
}

/** What each of `callers` spent on the UTC day of `now` (0 for a caller with no row). */
export async function spentToday(db: Db, callers: readonly string[], now: number): Promise<Map<string, number>> {
  const out = new Map(callers.map((c) => [c, 0]));
  if (callers.length === 0) return out;
  const s = db.t.callerSpend;
  const rows = await db.q
    .select({ caller: s.caller, usd: s.usd })
    .from(s)
    .where(and(inArray(s.caller, [...new Set(callers)]), eq(s.day, spendDay(now))));
  for (const r of rows) out.set(r.caller, r.usd);
  return out;
}

/** A caller's budget and spend today, as the Account page and the lists show them. */
export async function callerSpendToday(db: Db, caller: string, now: number): Promise<{ budgetUsd: number | null; spentUsd: number }> {
  const [budgetUsd, spent] = await Promise.all([callerBudget(db, caller), spentToday(db, [caller], now)]);
  return { budgetUsd, spentUsd: spent.get(caller) ?? 0 };
}

export type { BudgetRefusal };

/**
 * The budget check (DESIGN: The dashboard, "Spend budgets"): before a run, replay or probe starts,
 * and before each of their attempts is sent. Null when `caller` is nobody's (null: the open
 * dashboard, or `cli:`), has no budget, or has some of it left today; else the E_BUDGET refusal.
 * Reads the database each time, so every process and worker sees the spend of all of them. A
 * caller's first refusal of a UTC day is recorded in the audit trail (`budget.exceeded`).
 */
export async function checkBudget(db: Db, caller: string | null, now: number, warn: (line: string) => void = (l) => console.error(`aqven: ${l}`)): Promise<BudgetRefusal | null> {
  if (caller === null) return null;
  const budgetUsd = await callerBudget(db, caller);
  if (budgetUsd === null) return null;
  const spentUsd = (await spentToday(db, [caller], now)).get(caller) ?? 0;
  if (!budgetSpent(spentUsd, budgetUsd)) return null;
  const refusal = budgetRefusal(caller, budgetUsd, spentUsd, now);
  const dayStart = Date.parse(`${spendDay(now)}T00:00:00Z`);
  const told = await listAudit(db, { kind: 'budget.exceeded', actor: caller, since: dayStart, limit: 1 });
  if (told.rows.length === 0) {
    await recordAuditOrWarn(db, { kind: 'budget.exceeded', actor: caller, target: caller, detail: { budgetUsd, spentUsd, day: spendDay(now) } }, warn, now);
  }
  return refusal;
}
