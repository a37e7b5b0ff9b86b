// The spend of callers per UTC day and the budget check (DESIGN: The dashboard, "Spend budgets"),
// on both dialects: spend added by two connections at once is all counted; the check refuses a
// caller of a user or token whose budget is spent today — up to it counts as spent — naming the
// budget, the spend and when it resets, and records its first refusal of a day in the audit trail.
import { describe, expect, it } from 'vitest';
import { createToken, createUser, setTokenBudget, setUserBudget } from '@/db/account-queries';
import { listAudit } from '@/db/audit-queries';
import { addSpend, callerSpendToday, checkBudget, spentToday } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '@/test/helpers/dialects';

/** 21:30 UTC: 2 h 30 min before the budget resets */
const T = Date.UTC(2026, 4, 10, 21, 30);
const quiet = () => undefined;

describe.each(DIALECTS)('caller spend and budgets on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = t.db;
  });

  it('adds spend from two connections at once without losing any, per caller and UTC day', async () => {
    const other = otherProcess(t);
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const conn = i % 2 ? other.db : db;
          return addSpend(conn, conn.q, 'token:ci', 0.25, T);
        }),
      );
    } finally {
      await other.close();
    }
    await addSpend(db, db.q, 'token:ci', 1, T + 3 * 3_600_000); // the next UTC day
    await addSpend(db, db.q, 'token:ci', 0, T); // nothing spent: no row touched
    expect((await spentToday(db, ['token:ci', 'nobody'], T)).get('token:ci')).toBe(5);
    expect((await spentToday(db, ['token:ci', 'nobody'], T)).get('nobody')).toBe(0);
    expect((await spentToday(db, ['token:ci'], T + 3 * 3_600_000)).get('token:ci')).toBe(1);
  });

  it('refuses a caller whose budget is spent today, once it is reached, and tells the audit trail once a day', async () => {
    await createUser(db, { name: 'ana', role: 'editor', password: 'a long enough password' }, T);
    await createToken(db, { name: 'ci', role: 'editor', createdBy: null, expiresAt: null }, T);
    // no budget: never refused, however much was spent (5 USD above)
    expect(await checkBudget(db, 'token:ci', T, quiet)).toBeNull();
    await setTokenBudget(db, 'ci', 6);
    expect(await checkBudget(db, 'token:ci', T, quiet)).toBeNull();
    await addSpend(db, db.q, 'token:ci', 1.03, T);
    const refused = await checkBudget(db, 'token:ci', T, quiet);
    expect(refused).toEqual({
      code: 'E_BUDGET',
      message: "token ci's budget of $6.00/day is spent ($6.03 today); it resets at 00:00 UTC (in 2 h 30 min)",
      hint: 'Wait until 00:00 UTC, or have an admin raise the budget: aqven token budget ci 12/day (or none).',
      resetsAt: Date.UTC(2026, 4, 11),
      retryAfterS: 2.5 * 3600,
    });
    expect(await callerSpendToday(db, 'token:ci', T)).toEqual({ budgetUsd: 6, spentUsd: 6.03 });

    // a user's budget; exactly spent counts as spent
    await setUserBudget(db, 'ana', 2);
    await addSpend(db, db.q, 'ana', 1.5, T);
    expect(await checkBudget(db, 'ana', T, quiet)).toBeNull();
    await addSpend(db, db.q, 'ana', 0.5, T);
    expect((await checkBudget(db, 'ana', T + 60_000, quiet))?.message).toBe("user ana's budget of $2.00/day is spent ($2.00 today); it resets at 00:00 UTC (in 2 h 29 min)");
    // nobody's runs have no budget
    expect(await checkBudget(db, null, T, quiet)).toBeNull();

    // refused again the same day: recorded once per caller; a new day's refusal is recorded again
    await checkBudget(db, 'token:ci', T + 120_000, quiet);
    await setTokenBudget(db, 'ci', 0); // the next UTC day: $1.00 spent (the first test), a budget of nothing
    expect((await checkBudget(db, 'token:ci', T + 3 * 3_600_000, quiet))?.message).toBe(
      "token ci's budget of $0.00/day is spent ($1.00 today); it resets at 00:00 UTC (in 23 h 30 min)",
    );
    const told = await listAudit(db, { kind: 'budget.exceeded' });
    expect(told.rows.map((r) => [r.actor, r.at])).toEqual([
      ['token:ci', T + 3 * 3_600_000],
      ['ana', T + 60_000],
      ['token:ci', T],
    ]);
    expect(told.rows[2]!.detail).toEqual({ budgetUsd: 6, spentUsd: 6.03, day: '2026-05-10' });

    // a budget removed: free again
    await setTokenBudget(db, 'ci', null);
    expect(await checkBudget(db, 'token:ci', T + 3 * 3_600_000, quiet)).toBeNull();
  });
});
