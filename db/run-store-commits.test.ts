// What each commit of the run store writes (DESIGN: Storage, "Durable points"): a durable fact
// commits what its own run queued (and facts of no run); another run's queued facts wait for their
// own durable fact or FLUSH_MS. A node that ends before its queued row is written is written once,
// whole, where its row was queued; the turn count rides on the run's end.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { DIALECTS, openTestDb, type TestDb } from '../test/helpers/dialects';
import { newLease } from './run-lease';
import { FLUSH_MS, runStore } from './run-store';

const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.002 };
const T0 = Date.UTC(2026, 2, 3, 10);

function ok(startedAt: number): AttemptRecord {
  return {
    seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, outcome: 'ok', finishReason: 'stop', cause: null, action: 'none', request: [],
    responseText: '{"queue":"billing"}', error: null, validationErrors: [], discarded: false, streamedText: null, usage, startedAt, finishedAt: startedAt + 40,
    tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt, finishedAt: startedAt + 40 }],
  };
}

describe.each(DIALECTS)('the run store commits, on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  const nodeRow = async (id: string) => {
    const n = t.db.t.nodeRuns;
    return (await t.db.q.select({ status: n.status, output: n.output, turn: n.turn, startedAt: n.startedAt, finishedAt: n.finishedAt }).from(n).where(eq(n.id, id)))[0];
  };
  const begin = async (id: string) => {
    const store = runStore(t.db);
    await store.insertRun({ id, project: 'p', flow: 'triage', input: { ticket: 'x' }, startedAt: T0, lease: newLease(id, Date.now()) });
    return store;
  };

  it("a durable fact commits its own run's queued facts, not another run's: those follow within FLUSH_MS", async () => {
    const a = `own-a-${dialect}`;
    const b = `own-b-${dialect}`;
    const store = await begin(a);
    await begin(b);
    store.insertNode({ id: `${b}-n`, runId: b, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    store.insertNode({ id: `${a}-n`, runId: a, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    store.startAttempt({ id: `${a}-x`, nodeRunId: `${a}-n`, runId: a, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 });
    const queuedAt = Date.now();
    await store.finishAttempt(`${a}-x`, ok(T0));
    expect(await nodeRow(`${a}-n`)).toMatchObject({ status: 'running' });
    expect(await nodeRow(`${b}-n`)).toBeUndefined(); // b's node start waits: b has no durable fact in that commit
    // written by the timer armed when it was queued (the test's timeout is the hang guard)
    while ((await nodeRow(`${b}-n`)) === undefined) await new Promise((r) => setTimeout(r, 10));
    expect(Date.now() - queuedAt).toBeGreaterThanOrEqual(FLUSH_MS - 5);
  });

  it('a node that ends before its row is written: one row, whole, ahead of the attempt that names it; the turns ride on the run\'s end', async () => {
    const r = `whole-${dialect}`;
    const store = await begin(r);
    store.setRunTurns(r, 1);
    store.insertNode({ id: `${r}-n`, runId: r, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    store.startAttempt({ id: `${r}-x`, nodeRunId: `${r}-n`, runId: r, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 });
    const attempt = store.finishAttempt(`${r}-x`, ok(T0)); // not awaited: the node's end joins its commit, as the run loop does
    store.finishNode({ id: `${r}-n`, status: 'succeeded', output: { queue: 'billing' }, error: null, usage, finishedAt: T0 + 50 });
    store.setRunTurns(r, 2);
    await Promise.all([attempt, store.finishRun({ id: r, status: 'succeeded', output: { classify: { queue: 'billing' } }, error: null, turns: 2, usage, finishedAt: T0 + 60 })]);
    expect(await nodeRow(`${r}-n`)).toEqual({ status: 'succeeded', output: { queue: 'billing' }, turn: 1, startedAt: T0, finishedAt: T0 + 50 });
    const { runs, attempts } = t.db.t;
    expect((await t.db.q.select({ turns: runs.turns, status: runs.status }).from(runs).where(eq(runs.id, r)))[0]).toEqual({ turns: 2, status: 'succeeded' });
    expect(await t.db.q.select({ node: attempts.nodeRunId, outcome: attempts.outcome }).from(attempts).where(eq(attempts.runId, r))).toEqual([{ node: `${r}-n`, outcome: 'ok' }]);
  });

  it('a run still going: its latest turn count is written once, within FLUSH_MS; a node whose row was written ends with an update', async () => {
    const r = `going-${dialect}`;
    const store = await begin(r);
    store.setRunTurns(r, 1);
    store.insertNode({ id: `${r}-n`, runId: r, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    store.setRunTurns(r, 2);
    await store.flush();
    const { runs } = t.db.t;
    expect((await t.db.q.select({ turns: runs.turns }).from(runs).where(eq(runs.id, r)))[0]).toEqual({ turns: 2 });
    expect(await nodeRow(`${r}-n`)).toMatchObject({ status: 'running' });
    store.finishNode({ id: `${r}-n`, status: 'failed', output: null, error: { code: 'refusal', message: 'no', hint: 'h' }, usage, finishedAt: T0 + 50 });
    await store.flush();
    expect(await nodeRow(`${r}-n`)).toMatchObject({ status: 'failed', finishedAt: T0 + 50 });
  });
});
