// What each commit of the run store writes (DESIGN: Storage, "Durable points"): a durable fact
// commits what its own run queued (and facts of no run); another run's queued facts wait for their
// own durable fact or FLUSH_MS. A node that ends before its queued row is written is written once,
// whole, where its row was queued; the turn count rides on the run's end. SQLite reads a run's
// fence again only after another connection committed.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { DIALECTS, openTestDb, otherProcess, type TestDb } from '../test/helpers/dialects';
import { newLease } from './run-lease';
import { FLUSH_MS, runStore } from './run-store';
import type { SqliteDb } from './types';

const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.002 };
const T0 = Date.UTC(2026, 2, 3, 10);

function ok(startedAt: number): AttemptRecord {
  return {
    seq: 1,
    model: 'sim:a',
    chainIndex: 0,
    answerNo: 1,
    outcome: 'ok',
    finishReason: 'stop',
    cause: null,
    action: 'none',
    request: [],
    responseText: '{"queue":"billing"}',
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage,
    startedAt,
    finishedAt: startedAt + 40,
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

  it("a node that ends before its row is written: one row, whole, ahead of the attempt that names it; the turns ride on the run's end", async () => {
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

  it("a node's end after its run changed hands is refused, though the store has let the run go", async () => {
    const r = `late-${dialect}`;
    const store = await begin(r);
    store.insertNode({ id: `${r}-n`, runId: r, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    await store.flush();
    // another process takes the run over: this store's next durable fact is refused, and the run is let go
    const other = otherProcess(t);
    await other.db.q.update(other.db.t.runs).set({ owner: 'worker-2', fence: 2 }).where(eq(other.db.t.runs.id, r));
    await other.close();
    await expect(store.finishRun({ id: r, status: 'interrupted', output: null, error: null, turns: 1, usage, finishedAt: T0 + 40 })).rejects.toThrow(/lease/);
    // the stopped run closes its running node late: its run still fences it
    store.finishNode({ id: `${r}-n`, runId: r, status: 'failed', output: null, error: { code: 'interrupted', message: 'lost', hint: 'h' }, usage, finishedAt: T0 + 50 });
    await store.flush();
    expect(await nodeRow(`${r}-n`)).toMatchObject({ status: 'running', finishedAt: null });
  });
});

describe('SQLite: a fence confirmed once is not read again until another connection commits', () => {
  it('no fence read while this connection alone writes; one after another connection committed; a take-over by it is still refused', async () => {
    const t = await openTestDb('sqlite');
    const other = otherProcess(t);
    try {
      // the statements that read a run's fence, counted (the store prepares them when it is made)
      let fenceReads = 0;
      const client = (t.db as SqliteDb).$client as unknown as { prepare: (sql: string) => Record<string, unknown> };
      const prepare = client.prepare.bind(client);
      client.prepare = (text) => {
        const st = prepare(text);
        if (/^select "id" from "runs" where \("runs"\."id" = \? and "runs"\."owner" = \?/.test(text)) {
          const get = st.get as (...a: unknown[]) => unknown;
          st.get = (...a: unknown[]) => (fenceReads++, get.apply(st, a));
        }
        return st;
      };
      const store = runStore(t.db);
      const node = (r: string) =>
        store.insertNode({ id: `${r}-n`, runId: r, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
      const attempt = (r: string) => {
        store.startAttempt({ id: `${r}-x`, nodeRunId: `${r}-n`, runId: r, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 });
        return store.finishAttempt(`${r}-x`, ok(T0));
      };
      const lease = newLease('fenced', Date.now());
      await store.insertRun({ id: 'fenced', project: 'p', flow: 'triage', input: {}, startedAt: T0, lease });
      node('fenced');
      await attempt('fenced');
      expect(fenceReads).toBe(0); // written under our lease, and nobody else has committed since

      await other.db.q.insert(other.db.t.settings).values({ key: 'another-process', value: '1' });
      store.finishNode({ id: 'fenced-n', status: 'succeeded', output: null, error: null, usage, finishedAt: T0 + 50 });
      await store.flush();
      expect(fenceReads).toBe(1); // another connection committed: read again, once

      // another process takes the run over (as after an expired lease): this store's next fact is refused
      const { runs } = other.db.t;
      await other.db.q
        .update(runs)
        .set({ owner: 'other', fence: lease.fence + 1 })
        .where(eq(runs.id, 'fenced'));
      const lost = store.finishRun({ id: 'fenced', status: 'succeeded', output: {}, error: null, turns: 1, usage, finishedAt: T0 + 60 });
      await expect(lost).rejects.toThrow(/changed hands|lease/i);
      expect((await t.db.q.select({ status: t.db.t.runs.status }).from(t.db.t.runs).where(eq(t.db.t.runs.id, 'fenced')))[0]).toEqual({ status: 'running' });
    } finally {
      await other.close();
      await t.close();
    }
  });
});
