// The one check of a caller's limits (lib/contracts/caller-limits.ts, callerLimits) on both dialects,
// with the clock and the environment injected: run starts per minute per caller (the open dashboard
// one caller, a shell on the server none), then the daily spend budget; an attempt reads the budget
// alone and counts no start; notes per minute. The doors that call it are driven in
// test/contracts/start-run.test.ts, test/api/start-run-action.test.ts, run-budget.test.ts,
// notes-limits.test.ts and replay-actions.test.ts.
import { describe, expect, it } from 'vitest';
import { createToken, createUser, setUserBudget } from '@/db/account-queries';
import { addSpend } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { callerLimits, NOTES_PER_MINUTE } from '@/lib/contracts/caller-limits';
import { DIALECTS, withTestDb } from '@/test/helpers/dialects';

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);
const env = { AQVEN_RUNS_PER_MINUTE: '2' };
/** `n` run starts of `author` one after the other: each one's refusal code, or null */
async function starts(db: Db, author: string | null, n: number, o: { now?: number; env?: Record<string, string> } = {}): Promise<(string | null)[]> {
  const codes: (string | null)[] = [];
  for (let i = 0; i < n; i++) codes.push((await callerLimits(db, author, 'run-start', { now: o.now ?? T0, env: o.env ?? env }))?.code ?? null);
  return codes;
}

describe.each(DIALECTS)('callerLimits on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (t) => {
    db = t.db;
  });

  it('counts each caller’s run starts apart, the open dashboard as one caller; past the limit E_LIMIT saying when to come back', async () => {
    expect(await starts(db, 'ana', 2)).toEqual([null, null]);
    const refused = await callerLimits(db, 'ana', 'run-start', { now: T0 + 15_000, env });
    expect(refused).toEqual({ code: 'E_LIMIT', message: 'too many runs started: at most 2 a minute (AQVEN_RUNS_PER_MINUTE); try again in 45 s', retryAfterS: 45 });
    expect(await starts(db, 'token:ana', 2)).toEqual([null, null]);
    expect(await starts(db, null, 3)).toEqual([null, null, 'E_LIMIT']);
    // the next minute lets them in again
    expect(await callerLimits(db, 'ana', 'run-start', { now: T0 + 60_000, env })).toBeNull();
    // 0 turns the limit off
    expect(await starts(db, 'cy', 5, { env: { AQVEN_RUNS_PER_MINUTE: '0' } })).toEqual(Array(5).fill(null));
  });

  it('holds a shell on the server (cli:<login>) to no run limit and no budget', async () => {
    expect(await starts(db, 'cli:root', 10)).toEqual(Array(10).fill(null));
  });

  it('a spent budget refuses a start (after counting it) and an attempt (counting no start): E_BUDGET naming the budget', async () => {
    await createUser(db, { name: 'ed', role: 'editor', password: 'a long enough password' }, T0);
    await setUserBudget(db, 'ed', 1);
    await addSpend(db, db.q, 'ed', 1, T0);
    const start = await callerLimits(db, 'ed', 'run-start', { now: T0, env });
    expect(start).toMatchObject({ code: 'E_BUDGET', message: expect.stringMatching(/^user ed's budget of \$1\.00\/day is spent \(\$1\.00 today\)/) });
    for (let i = 0; i < 3; i++) expect(await callerLimits(db, 'ed', 'attempt', { now: T0, env })).toMatchObject({ code: 'E_BUDGET', message: start!.message });
    // one start counted (the refused one), none by the attempts: the second start is refused by the budget, not the rate
    expect(await callerLimits(db, 'ed', 'run-start', { now: T0, env })).toMatchObject({ code: 'E_BUDGET' });
    expect(await callerLimits(db, 'ed', 'run-start', { now: T0, env })).toMatchObject({ code: 'E_LIMIT' });
    // a token without a budget is refused nothing by it
    await createToken(db, { name: 'ci', role: 'editor', createdBy: 'ed' }, T0);
    expect(await callerLimits(db, 'token:ci', 'attempt', { now: T0, env })).toBeNull();
  });

  it(`counts notes per author: ${NOTES_PER_MINUTE} a minute, the open dashboard as "open:dashboard"`, async () => {
    for (let i = 0; i < NOTES_PER_MINUTE; i++) expect(await callerLimits(db, null, 'note', { now: T0 })).toBeNull();
    expect(await callerLimits(db, 'open:dashboard', 'note', { now: T0 + 20_000 })).toEqual({
      code: 'E_LIMIT',
      message: `too many notes: at most ${NOTES_PER_MINUTE} a minute; try again in 40 s`,
      retryAfterS: 40,
    });
    // notes do not count against run starts
    expect(await callerLimits(db, 'dee', 'note', { now: T0 })).toBeNull();
    expect(await starts(db, 'dee', 2)).toEqual([null, null]);
  });
});
