// Daily spend budgets over the simulator (DESIGN: The dashboard, "Spend budgets"), on both
// dialects: every attempt of a caller's run adds its cost to caller_spend as it is committed, and
// the budget is checked before each attempt is sent — past it the run stops with E_BUDGET, naming
// the budget and when it resets, and sends nothing more; the spend of another process counts; a new
// UTC day starts afresh. A queued run keeps its caller's budget when a worker claims it, and a
// limits probe stops at the budget too.
import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createToken, createUser } from '@/db/account-queries';
import { listAudit } from '@/db/audit-queries';
import { addSpend } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { createRateGate } from '@/lib/engine/rate-gate';
import { createVirtualClock } from '@/lib/engine/virtual-clock';
import { beginRun } from '@/lib/flow/run-flow';
import { routeToSimulator } from '@/lib/flow/simulate';
import { getRunRecord } from '@/lib/flow/stored-run';
import { runLimitsProbe } from '@/lib/limits/probe';
import { DIALECTS, otherProcess } from '../helpers/dialects';
import { FLASH_LITE, worldOn, type World } from '../helpers/showcase';

/** 20:48 UTC: the budget resets in 3 h 12 min */
const T = Date.UTC(2026, 2, 1, 20, 48);
/** 200,000 input tokens at the simulated OpenRouter's price ($0.50 per million, SIM_PRICE): each attempt costs $0.10 */
const DIME = { input: 200_000, output: 0 };
const TICKET = { ticket: 'my invoice is wrong' };

let w: World<Db> | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

const targetOf = (db: Db) => (db.dialect === 'pg' ? db.url : db.name);
const spendRows = async (db: Db) => db.q.select().from(db.t.callerSpend).orderBy(db.t.callerSpend.caller);
const at = (ms: number) => ({ gate: createRateGate(), clock: createVirtualClock(ms) });

describe.each(DIALECTS)('spend budgets on %s', (dialect) => {
  it('stops the run with E_BUDGET before the attempt that would pass the budget; nothing more is sent, no on_fail route runs', async () => {
    // every answer is invalid: the classifier repairs, and each attempt costs $0.10
    w = await worldOn(dialect, { [FLASH_LITE]: [{ kind: 'invalid', usage: DIME }] });
    const { db, sim } = w;
    await createToken(db, { name: 'ci', role: 'editor', createdBy: null, expiresAt: null, budgetUsdPerDay: 0.2 }, T - 1000);

    const record = await w.run('triage', TICKET, { startedBy: 'token:ci', ...at(T) });
    const message = "token ci's budget of $0.20/day is spent ($0.20 today); it resets at 00:00 UTC (in 3 h 12 min)";
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'E_BUDGET', node: 'classify', message });
    expect(record.error!.hint).toContain('aqven token budget ci');
    // two attempts ($0.20), then the third was never sent
    expect(sim.requests()).toHaveLength(2);
    const classify = record.nodes.find((n) => n.id === 'classify')!;
    expect(classify).toMatchObject({ status: 'failed', error: { code: 'E_BUDGET', message } });
    expect(classify.attempts).toHaveLength(2);
    // the spent budget stops the run: its on_fail route is not followed
    expect(record.nodes.find((n) => n.id === 'manual_review')).toMatchObject({ status: 'skipped', turn: 0 });
    expect(record.nodes.find((n) => n.id === 'draft')).toMatchObject({ status: 'skipped' });
    // recorded as it ran, and the spend counted with the attempts
    expect(await getRunRecord(db, record.id)).toMatchObject({ status: 'failed', error: { code: 'E_BUDGET', node: 'classify', message } });
    expect(await spendRows(db)).toEqual([{ caller: 'token:ci', day: '2026-03-01', usd: expect.closeTo(0.2, 9) }]);

    // the next run of the day sends nothing: refused before its first attempt
    const again = await w.run('triage', TICKET, { startedBy: 'token:ci', ...at(T + 60_000) });
    expect(again.error).toMatchObject({ code: 'E_BUDGET', message: "token ci's budget of $0.20/day is spent ($0.20 today); it resets at 00:00 UTC (in 3 h 11 min)" });
    expect(again.nodes.find((n) => n.id === 'classify')!.attempts).toHaveLength(0);
    expect(sim.requests()).toHaveLength(2);
    // the audit trail says so once that day
    const told = await listAudit(db, { kind: 'budget.exceeded' });
    expect(told.rows).toMatchObject([{ actor: 'token:ci', target: 'token:ci' }]);

    // a new UTC day: the budget is whole again
    const tomorrow = await w.run('triage', TICKET, { startedBy: 'token:ci', ...at(T + 4 * 3_600_000) });
    expect(tomorrow.error).toMatchObject({ code: 'E_BUDGET', message: expect.stringContaining('($0.20 today)') });
    expect(sim.requests()).toHaveLength(4);
    expect((await spendRows(db)).map((r) => [r.day, r.usd])).toEqual([
      ['2026-03-01', expect.closeTo(0.2, 9)],
      ['2026-03-02', expect.closeTo(0.2, 9)],
    ]);
  });

  it("counts another process's spend, and the callers of no budget are never held", async () => {
    w = await worldOn(dialect, { '*': [{ kind: 'ok', usage: DIME }] });
    const { db, sim } = w;
    await createUser(db, { name: 'ana', role: 'editor', password: 'a long enough password' }, T - 1000);
    await db.q.update(db.t.users).set({ budgetUsdPerDay: 0.5 }).where(eq(db.t.users.name, 'ana'));
    // another dashboard process (its own connection) spent ana's budget today
    const other = otherProcess({ db, target: targetOf(db), close: async () => undefined });
    try {
      await addSpend(other.db, other.db.q, 'ana', 0.5, T - 3_600_000);
    } finally {
      await other.close();
    }
    const refused = await w.run('triage', TICKET, { startedBy: 'ana', ...at(T) });
    expect(refused.error).toMatchObject({ code: 'E_BUDGET', message: "user ana's budget of $0.50/day is spent ($0.50 today); it resets at 00:00 UTC (in 3 h 12 min)" });
    expect(sim.requests()).toHaveLength(0);

    // nobody's run (the open dashboard) and a shell's run (`cli:`) have no budget, and count no spend
    expect((await w.run('triage', TICKET, { startedBy: null, ...at(T) })).status).toBe('succeeded');
    expect((await w.run('triage', TICKET, { startedBy: 'cli:ana', ...at(T) })).status).toBe('succeeded');
    expect(await spendRows(db)).toEqual([{ caller: 'ana', day: '2026-03-01', usd: 0.5 }]);
    // a caller without a budget counts its spend, and runs on
    const free = await w.run('triage', TICKET, { startedBy: 'bob', ...at(T) });
    expect(free.status).toBe('succeeded');
    const [bob] = await db.q
      .select()
      .from(db.t.callerSpend)
      .where(and(eq(db.t.callerSpend.caller, 'bob'), eq(db.t.callerSpend.day, '2026-03-01')));
    expect(bob!.usd).toBeCloseTo(free.usage.costUsd, 9);
  });
});

describe('a queued run (PostgreSQL mode)', () => {
  it("keeps its caller's budget when a worker claims it", async () => {
    w = await worldOn('pg', { [FLASH_LITE]: [{ kind: 'invalid', usage: DIME }] });
    const { db, project, sim } = w;
    if (db.dialect !== 'pg') throw new Error('pg');
    await createToken(db, { name: 'ci', role: 'editor', createdBy: null, expiresAt: null, budgetUsdPerDay: 0.1 }, T - 1000);
    const { enqueueRun } = await import('@/lib/flow/enqueue');
    const { claimRun } = await import('@/lib/queue/claim');
    const runId = await enqueueRun({ db, project, snapshotId: null, projectHash: null, startedBy: 'token:ci', flow: 'triage', input: TICKET });
    const claim = await claimRun(db, runId, { project, snapshotId: null, now: T });
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    expect(claim.startedBy).toBe('token:ci');
    const { providers, env } = routeToSimulator(project, sim);
    const started = await beginRun({ project, flow: claim.flow, input: claim.input, providers, env, db, runId, lease: claim.lease, startedBy: claim.startedBy, ...at(T) });
    const record = await started.done;
    expect(record.error).toMatchObject({ code: 'E_BUDGET', node: 'classify' });
    expect(sim.requests()).toHaveLength(1);
    expect(await getRunRecord(db, runId)).toMatchObject({ status: 'failed', startedBy: 'token:ci', error: { code: 'E_BUDGET' } });
  });
});

describe('a limits probe', () => {
  it("stops at its caller's budget: the run fails with E_BUDGET, what was sent is recorded", async () => {
    w = await worldOn('sqlite', { '*': [{ kind: 'ok', json: { value: 1 }, usage: DIME }] });
    const { db, project, sim } = w;
    await createToken(db, { name: 'probe', role: 'editor', createdBy: null, expiresAt: null, budgetUsdPerDay: 0.3 }, T - 1000);
    const { providers, env } = routeToSimulator(project, sim);
    const report = await runLimitsProbe(
      { project, db, providers, env },
      { model: `openrouter:${FLASH_LITE}`, dimensions: ['depth'], trials: 5, threshold: 0.9, maxCalls: 300, maxCostUsd: 100, maxTokens: 1024, startedBy: 'token:probe', ...at(T) },
    );
    expect(report.stopped).toMatchObject({ reason: 'spend_budget', message: expect.stringMatching(/^token probe's budget of \$0\.30\/day is spent/) });
    expect(report.calls).toBe(sim.requests().length);
    expect(report.calls).toBeGreaterThanOrEqual(3);
    const run = await getRunRecord(db, report.runId);
    expect(run).toMatchObject({ kind: 'limits', status: 'failed', error: { code: 'E_BUDGET' } });
    expect(run!.nodes.flatMap((n) => n.attempts)).toHaveLength(report.calls);
  });
});
