// A run the store adopts (taken over from a dead process, or a queued run a worker claimed) feeds
// the search index, the signatures and the daily sums as a run it inserted does: its kind, its
// input and its open nodes' agents are read once (SQLite at once, PostgreSQL before the next commit).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { DIALECTS, openTestDb, otherProcess, type TestDb } from '../test/helpers/dialects';
import { scanned, stored } from '../test/helpers/feeds-scan';
import { attemptSignature } from './run-aggregates';
import { LEASE_TTL_MS, leaseKeeper, newLease, takeOver } from './run-lease';
import { runStore } from './run-store';
import type { Db } from './types';

const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.002 };
const T0 = Date.UTC(2026, 2, 3, 10);

function refused(seq: number, startedAt: number): AttemptRecord {
  return {
    seq,
    model: 'sim:a',
    chainIndex: 0,
    answerNo: seq,
    outcome: 'refusal',
    finishReason: 'content_filter',
    cause: 'refusal',
    action: 'none',
    request: [],
    responseText: null,
    error: { kind: 'refusal', message: `sim:a refused to answer (finish reason content_filter) #${seq}`, detail: null },
    validationErrors: [],
    discarded: true,
    streamedText: null,
    usage,
    startedAt,
    finishedAt: startedAt + 40,
    tries: [],
  };
}

describe.each(DIALECTS)('adopted runs feed as inserted ones, on %s', (dialect) => {
  let t: TestDb;
  let other: { db: Db; close(): Promise<void> };
  beforeAll(async () => {
    t = await openTestDb(dialect);
    other = otherProcess(t);
  }, 90_000);
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  const inputDocs = async (runId: string) => {
    const d = t.db.t.searchDocs;
    return (await t.db.q.select({ field: d.field, body: d.body }).from(d).where(eq(d.runId, runId))).filter((x) => x.field === 'input');
  };

  it("a run taken over: its restarted node's agent and its kind are read, its input is not indexed twice", async () => {
    const run = `taken-${dialect}`;
    const node = `${run}-n`;
    const first = runStore(t.db);
    await first.insertRun({ id: run, project: 'p', flow: 'triage', input: { ticket: 'okapi' }, startedAt: T0, lease: newLease(run, T0, 'w1') });
    first.insertNode({ id: node, runId: run, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 });
    await first.flush();
    leaseKeeper(t.db).drop(run); // w1 died

    const lease = (await takeOver(other.db, { runId: run, fence: 1 }, T0 + LEASE_TTL_MS + 1, 'w2'))!;
    const second = runStore(other.db);
    second.adoptRun({ id: run, lease, nodeRunIds: [node] });
    const at = T0 + LEASE_TTL_MS + 2;
    second.startAttempt({ id: `${run}-a`, nodeRunId: node, runId: run, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: at });
    await second.finishAttempt(`${run}-a`, refused(1, at));
    const error = { code: 'refusal', message: 'sim:a refused to answer (finish reason content_filter)', hint: 'Set output.on_refusal' };
    second.finishNode({ id: node, status: 'failed', output: null, error, usage, finishedAt: at + 50 });
    await second.finishRun({ id: run, status: 'failed', output: null, error: { ...error, node: 'classify' }, turns: 1, usage, finishedAt: at + 60 });

    const live = await stored(t.db);
    const scan = await scanned(t.db);
    expect(live.sigs[`${run}-a`]).toBe(attemptSignature('classifier', { model: 'sim:a', cause: 'refusal', errorMessage: refused(1, at).error!.message }).sig);
    expect(live.sigs[node]).toBe(scan.sigs[node]);
    expect(live.agentDaily).toEqual(scan.agentDaily);
    expect(live.nodeDaily).toEqual(scan.nodeDaily);
    expect(live.failureDaily).toEqual(scan.failureDaily);
    expect(live.agentDaily).toContainEqual(expect.objectContaining({ agent: 'classifier', outcome: 'refusal', cause: 'refusal', attempts: 1 }));
    expect(await inputDocs(run)).toEqual([{ field: 'input', body: '{"ticket":"okapi"}' }]);
  });

  it('a claimed queued run: its input is indexed at the claim; a replay among them is counted nowhere', async () => {
    const before = await stored(t.db);
    const run = `claimed-${dialect}`;
    const { runs } = t.db.t;
    // as the queue leaves it once a worker claimed it: running, the worker's lease, never inserted by a store
    const lease = newLease(run, T0, 'w3');
    await t.db.q.insert(runs).values({
      id: run,
      project: 'p',
      flow: 'triage',
      status: 'running',
      input: 'a pangolin question',
      kind: 'replay',
      owner: lease.owner,
      fence: lease.fence,
      heartbeatAt: T0,
      leaseExpiresAt: lease.expiresAt,
      queuedAt: T0 - 5,
      startedAt: T0,
    });
    const s = runStore(other.db);
    s.adoptRun({ id: run, lease });
    s.insertNode({ id: `${run}-n`, runId: run, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T0 + 1 });
    s.startAttempt({ id: `${run}-a`, nodeRunId: `${run}-n`, runId: run, seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T0 + 2 });
    await s.finishAttempt(`${run}-a`, refused(1, T0 + 2));
    s.finishNode({ id: `${run}-n`, status: 'succeeded', output: { queue: 'tech' }, error: null, usage, finishedAt: T0 + 50 });
    await s.finishRun({ id: run, status: 'succeeded', output: null, error: null, turns: 1, usage, finishedAt: T0 + 60 });

    // a text input is searched as its text
    expect(await inputDocs(run)).toEqual([{ field: 'input', body: 'a pangolin question' }]);
    const after = await stored(t.db);
    expect([after.agentDaily, after.nodeDaily, after.failureDaily]).toEqual([before.agentDaily, before.nodeDaily, before.failureDaily]);
    expect(after.sigs[`${run}-a`]).toMatch(/^[0-9a-f]{16}$/);
  });
});
