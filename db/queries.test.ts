// The run history reads (listRuns, getRunFacts) on both dialects: one database per dialect,
// emptied before each test so every list is the test's own.
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { parseRunFilters } from '@/lib/dashboard/run-filters';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { markInterrupted } from './client';
import { INTERRUPTED_ATTEMPT_ERROR, INTERRUPTED_NODE_ERROR } from './interrupted-error';
import { encodeCursor, getRunFacts, InvalidCursorError, listRuns, type RunFilters } from './queries';
import { LEASE_TTL_MS, leaseKeeper, newLease } from './run-lease';
import { runStore } from './run-store';
import type { Db } from './types';
import { attemptRecord } from '../test/helpers/attempt-record';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

const attempt = attemptRecord;

async function seedRun(db: Db, id: string, startedAt: number, flow: string, atts: AttemptRecord[], status: 'succeeded' | 'failed' = 'succeeded') {
  const s = runStore(db);
  await s.insertRun({ id, project: 'p', flow, input: { x: 1 }, startedAt });
  const durable: Promise<void>[] = [];
  const nr = `${id}-n`;
  s.insertNode({ id: nr, runId: id, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt });
  atts.forEach((a, i) => {
    const aid = `${id}-a${i}`;
    s.startAttempt({ id: aid, nodeRunId: nr, runId: id, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: a.request, startedAt: a.startedAt });
    durable.push(s.finishAttempt(aid, a));
  });
  s.finishNode({ id: nr, status, output: status === 'succeeded' ? { ok: true } : null, error: null, usage, finishedAt: startedAt + 5 });
  durable.push(s.finishRun({ id, status, output: null, error: null, turns: 1, usage, finishedAt: startedAt + 10 }));
  await s.flush();
  await Promise.all(durable);
}

describe.each(DIALECTS)('run history queries on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.runs); // their nodes, attempts and tries go with them (ON DELETE CASCADE)
  });

  it('pages newest first with a cursor that never repeats or skips a run', async () => {
    for (let i = 0; i < 7; i++) await seedRun(db, `r${i}`, 1000 + Math.floor(i / 2), 'triage', [attempt(1)]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof listRuns>> = await listRuns(db, { limit: 3, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
  });

  it('filters by status, flow, model, cause, retried and fell back', async () => {
    await seedRun(db, 'plain', 1, 'triage', [attempt(1)]);
    await seedRun(db, 'fellback', 2, 'triage', [
      attempt(1, { outcome: 'error', cause: 'provider_error', action: 'fallback' }),
      attempt(2, { model: 'openrouter:b', chainIndex: 1, answerNo: 1 }),
    ]);
    await seedRun(db, 'repaired', 3, 'long', [attempt(1, { cause: 'invalid_output', action: 'repair' }), attempt(2)], 'failed');
    const ids = async (filters: RunFilters) => (await listRuns(db, { filters })).items.map((r) => r.id);
    expect(await ids({ status: 'failed' })).toEqual(['repaired']);
    expect(await ids({ flow: 'triage' })).toEqual(['fellback', 'plain']);
    expect(await ids({ model: 'openrouter:b' })).toEqual(['fellback']);
    expect(await ids({ cause: 'invalid_output' })).toEqual(['repaired']);
    expect(await ids({ retried: true })).toEqual(['repaired']);
    expect(await ids({ fellBack: true })).toEqual(['fellback']);
    expect(await ids({ agent: 'nobody' })).toEqual([]);
    expect((await listRuns(db)).items.map((r) => [r.id, r.attempts])).toEqual([
      ['repaired', 2],
      ['fellback', 2],
      ['plain', 1],
    ]);
  });

  it('reads a stored run back as its facts, attempts and tries in order', async () => {
    await seedRun(db, 'r', 5000, 'triage', [attempt(1, { outcome: 'truncated', cause: 'truncated', action: 'retry', discarded: true }), attempt(2)]);
    const facts = (await getRunFacts(db, 'r'))!;
    expect(facts.nodes[0]!.attempts.map((a) => [a.seq, a.outcome, a.action, a.discarded])).toEqual([
      [1, 'truncated', 'retry', true],
      [2, 'ok', 'none', false],
    ]);
    expect(facts.nodes[0]!.attempts[0]!.tries).toEqual([
      { tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, discardedText: null, startedAt: 1001, finishedAt: 1011 },
    ]);
    expect(facts.startedAt).toBe(5000);
    expect(await getRunFacts(db, 'missing')).toBeNull();
  });

  it('lists nodes as the run record does — turn (never reached last), place in the flow, start — whatever order they were written in', async () => {
    const s = runStore(db);
    await s.insertRun({ id: 'ordered', project: 'p', flow: 'triage', input: {}, startedAt: 1 });
    const node = (id: string, turn: number, ord: number, startedAt: number | null) =>
      s.insertNode({
        id: `ordered-${id}`,
        runId: 'ordered',
        nodeId: id,
        agent: 'classifier',
        turn,
        ord,
        status: startedAt === null ? 'skipped' : 'running',
        policy: null,
        startedAt,
      });
    node('unreached', 0, 2, null); // turn 0: never reached, listed last
    node('reply', 2, 1, 30);
    node('draft', 2, 0, 31); // started later, but earlier in the flow
    node('route', 1, 1, 10);
    node('classify', 1, 0, 10);
    // rows written before the place in the flow was kept: ord 0, ordered by start
    node('old-b', 3, 0, 41);
    node('old-a', 3, 0, 40);
    await s.flush();
    const facts = (await getRunFacts(db, 'ordered'))!;
    expect(facts.nodes.map((n) => n.id)).toEqual(['classify', 'route', 'draft', 'reply', 'old-a', 'old-b', 'unreached']);
    expect(facts.nodes.map((n) => n.turn)).toEqual([1, 1, 2, 2, 3, 3, 0]);
    await s.finishRun({ id: 'ordered', status: 'succeeded', output: null, error: null, turns: 3, usage, finishedAt: 50 });
  });

  it('joins the streamed text of an attempt in flight, batch by batch, per attempt', async () => {
    const s = runStore(db);
    await s.insertRun({ id: 'live', project: 'p', flow: 'triage', input: {}, startedAt: 1 });
    s.insertNode({ id: 'live-n', runId: 'live', nodeId: 'draft', agent: 'writer', turn: 1, ord: 0, status: 'running', policy: null, startedAt: 1 });
    s.startAttempt({ id: 'live-a1', nodeRunId: 'live-n', runId: 'live', seq: 1, model: 'm:x', chainIndex: 0, answerNo: 1, request: [], startedAt: 1 });
    s.startAttempt({ id: 'live-a2', nodeRunId: 'live-n', runId: 'live', seq: 2, model: 'm:y', chainIndex: 1, answerNo: 1, request: [], startedAt: 2 });
    for (const t of ['Dear ', 'customer, ', 'thanks ']) s.appendStreamed('live-a1', t);
    s.appendStreamed('live-a2', 'Hello');
    await s.flush();
    const atts = (await getRunFacts(db, 'live'))!.nodes[0]!.attempts;
    expect(atts.map((a) => [a.seq, a.outcome, a.streamedText])).toEqual([
      [1, null, 'Dear customer, thanks '],
      [2, null, 'Hello'],
    ]);
    await s.finishRun({ id: 'live', status: 'failed', output: null, error: null, turns: 1, usage, finishedAt: 5 });
  });

  it('marks runs whose lease expired interrupted, and leaves live ones alone', async () => {
    const s = runStore(db);
    const t0 = Date.now();
    await s.insertRun({ id: 'mine', project: 'p', flow: 'f', input: {}, startedAt: 1 });
    await s.insertRun({ id: 'dead', project: 'p', flow: 'f', input: {}, startedAt: 2, lease: newLease('dead', t0, 'a-dead-process') });
    s.insertNode({ id: 'dead-n', runId: 'dead', nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: 2 });
    s.startAttempt({ id: 'dead-a', nodeRunId: 'dead-n', runId: 'dead', seq: 1, model: 'openrouter:a', chainIndex: 0, answerNo: 1, request: [], startedAt: 3 });
    await s.flush();
    leaseKeeper(db).drop('dead'); // its process died: nobody renews it
    expect(await markInterrupted(db, t0 + LEASE_TTL_MS - 1)).toBe(0); // not expired yet
    expect(await markInterrupted(db, t0 + LEASE_TTL_MS + 1)).toBe(1);
    const { runs } = db.t;
    const status = async (id: string) => (await db.q.select({ status: runs.status }).from(runs).where(eq(runs.id, id)))[0]!.status;
    expect(await status('dead')).toBe('interrupted');
    expect(await status('mine')).toBe('running'); // this process's own live run, renewed by its keeper
    // the unfinished node and the attempt in flight say why, in the words of interrupted-error.ts
    const node = (await getRunFacts(db, 'dead'))!.nodes[0]!;
    expect(node).toMatchObject({ status: 'failed', error: INTERRUPTED_NODE_ERROR });
    expect(node.attempts[0]).toMatchObject({ outcome: null, error: INTERRUPTED_ATTEMPT_ERROR });
    leaseKeeper(db).drop('mine'); // the next test empties the table
  });

  it('refuses a cursor it never handed out instead of ignoring it', async () => {
    await seedRun(db, 'r', 5000, 'triage', [attempt(1)]);
    await expect(listRuns(db, { cursor: 'not-a-cursor' })).rejects.toThrow(InvalidCursorError);
    await expect(listRuns(db, { cursor: encodeCursor({ startedAt: 5000, id: 'r' }).slice(0, -2) })).rejects.toThrow(InvalidCursorError);
    expect((await listRuns(db, { cursor: encodeCursor({ startedAt: 5001, id: 'z' }) })).items.map((r) => r.id)).toEqual(['r']);
    const bad = parseRunFilters({ cursor: 'garbage!' });
    expect(bad).toMatchObject({ ok: false, error: expect.stringMatching(/^query parameter cursor: cursor "garbage!" is not one this list handed out/) });
    expect(parseRunFilters({ cursor: encodeCursor({ startedAt: 1, id: 'x' }) }).ok).toBe(true);
  });

  it('keeps the longer of two rate-limit pauses for a model', () => {
    const s = runStore(db);
    s.setPause('openrouter:a', 5000, '429');
    s.setPause('openrouter:a', 3000, '429 again');
    expect(s.getPause('openrouter:a')).toBe(5000);
    expect(s.getPause('openrouter:b')).toBeNull();
  });
});
