import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { closeDb, markInterrupted, openDb } from './client';
import { INTERRUPTED_ATTEMPT_ERROR, INTERRUPTED_NODE_ERROR } from './interrupted-error';
import { parseRunFilters } from '@/lib/server/run-filters';
import { encodeCursor, getRunFacts, InvalidCursorError, listRuns, type RunFilters } from './queries';
import { LEASE_TTL_MS, leaseKeeper, newLease } from './run-lease';
import { runStore } from './run-store';

function freshDb() {
  const path = join(mkdtempSync(join(tmpdir(), 'aqven-db-')), 'aqven.db');
  return { path, db: openDb(path) };
}

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

function attempt(seq: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    seq, model: 'openrouter:a', chainIndex: 0, answerNo: seq, outcome: 'ok', finishReason: 'stop', cause: null, action: 'none',
    request: [{ role: 'user', content: 'hi' }], responseText: '{}', error: null, validationErrors: [], discarded: false,
    streamedText: null, usage, startedAt: 1000 + seq, finishedAt: 1010 + seq,
    tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 1000 + seq, finishedAt: 1010 + seq }],
    ...over,
  };
}

function seedRun(db: ReturnType<typeof openDb>, id: string, startedAt: number, flow: string, atts: AttemptRecord[], status: 'succeeded' | 'failed' = 'succeeded') {
  const s = runStore(db);
  s.insertRun({ id, project: 'p', flow, input: { x: 1 }, startedAt });
  const nr = `${id}-n`;
  s.insertNode({ id: nr, runId: id, nodeId: 'classify', agent: 'classifier', turn: 1, status: 'running', policy: null, startedAt });
  atts.forEach((a, i) => {
    const aid = `${id}-a${i}`;
    s.startAttempt({ id: aid, nodeRunId: nr, runId: id, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: a.request, startedAt: a.startedAt });
    void s.finishAttempt(aid, a);
  });
  s.finishNode({ id: nr, status, output: status === 'succeeded' ? { ok: true } : null, error: null, usage, finishedAt: startedAt + 5 });
  void s.finishRun({ id, status, output: null, error: null, turns: 1, usage, finishedAt: startedAt + 10 });
  s.flush();
}

describe('run history queries', () => {
  it('pages newest first with a cursor that never repeats or skips a run', () => {
    const { db } = freshDb();
    for (let i = 0; i < 7; i++) seedRun(db, `r${i}`, 1000 + Math.floor(i / 2), 'triage', [attempt(1)]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = listRuns(db, { limit: 3, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
  });

  it('filters by status, flow, model, cause, retried and fell back', () => {
    const { db } = freshDb();
    seedRun(db, 'plain', 1, 'triage', [attempt(1)]);
    seedRun(db, 'fellback', 2, 'triage', [attempt(1, { outcome: 'error', cause: 'provider_error', action: 'fallback' }), attempt(2, { model: 'openrouter:b', chainIndex: 1, answerNo: 1 })]);
    seedRun(db, 'repaired', 3, 'long', [attempt(1, { cause: 'invalid_output', action: 'repair' }), attempt(2)], 'failed');
    const ids = (filters: RunFilters) => listRuns(db, { filters }).items.map((r) => r.id);
    expect(ids({ status: 'failed' })).toEqual(['repaired']);
    expect(ids({ flow: 'triage' })).toEqual(['fellback', 'plain']);
    expect(ids({ model: 'openrouter:b' })).toEqual(['fellback']);
    expect(ids({ cause: 'invalid_output' })).toEqual(['repaired']);
    expect(ids({ retried: true })).toEqual(['repaired']);
    expect(ids({ fellBack: true })).toEqual(['fellback']);
    expect(ids({ agent: 'nobody' })).toEqual([]);
    expect(listRuns(db).items.map((r) => [r.id, r.attempts])).toEqual([['repaired', 2], ['fellback', 2], ['plain', 1]]);
  });

  it('reads a stored run back as its facts, attempts and tries in order', () => {
    const { db } = freshDb();
    seedRun(db, 'r', 5000, 'triage', [attempt(1, { outcome: 'truncated', cause: 'truncated', action: 'retry', discarded: true }), attempt(2)]);
    const facts = getRunFacts(db, 'r')!;
    expect(facts.nodes[0]!.attempts.map((a) => [a.seq, a.outcome, a.action, a.discarded])).toEqual([
      [1, 'truncated', 'retry', true],
      [2, 'ok', 'none', false],
    ]);
    expect(facts.nodes[0]!.attempts[0]!.tries).toEqual([
      { tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, discardedText: null, startedAt: 1001, finishedAt: 1011 },
    ]);
    expect(facts.startedAt).toBe(5000);
    expect(getRunFacts(db, 'missing')).toBeNull();
  });

  it('marks runs whose lease expired interrupted, and leaves live ones alone', async () => {
    const { db, path } = freshDb();
    const s = runStore(db);
    const t0 = Date.now();
    await s.insertRun({ id: 'mine', project: 'p', flow: 'f', input: {}, startedAt: 1 });
    await s.insertRun({ id: 'dead', project: 'p', flow: 'f', input: {}, startedAt: 2, lease: newLease('dead', t0, 'a-dead-process') });
    s.insertNode({ id: 'dead-n', runId: 'dead', nodeId: 'classify', agent: 'classifier', turn: 1, status: 'running', policy: null, startedAt: 2 });
    s.startAttempt({ id: 'dead-a', nodeRunId: 'dead-n', runId: 'dead', seq: 1, model: 'openrouter:a', chainIndex: 0, answerNo: 1, request: [], startedAt: 3 });
    s.flush();
    leaseKeeper(db).drop('dead'); // its process died: nobody renews it
    expect(markInterrupted(db, t0 + LEASE_TTL_MS - 1)).toBe(0); // not expired yet
    expect(markInterrupted(db, t0 + LEASE_TTL_MS + 1)).toBe(1);
    const status = (id: string) => (db.$client.prepare('SELECT status FROM runs WHERE id = ?').get(id) as { status: string }).status;
    expect(status('dead')).toBe('interrupted');
    expect(status('mine')).toBe('running'); // this process's own live run, renewed by its keeper
    // the unfinished node and the attempt in flight say why, in the words of interrupted-error.ts
    const node = getRunFacts(db, 'dead')!.nodes[0]!;
    expect(node).toMatchObject({ status: 'failed', error: INTERRUPTED_NODE_ERROR });
    expect(node.attempts[0]).toMatchObject({ outcome: null, error: INTERRUPTED_ATTEMPT_ERROR });
    await closeDb(path);
  });

  it('refuses a cursor it never handed out instead of ignoring it', () => {
    const { db } = freshDb();
    seedRun(db, 'r', 5000, 'triage', [attempt(1)]);
    expect(() => listRuns(db, { cursor: 'not-a-cursor' })).toThrow(InvalidCursorError);
    expect(() => listRuns(db, { cursor: encodeCursor({ startedAt: 5000, id: 'r' }).slice(0, -2) })).toThrow(InvalidCursorError);
    expect(listRuns(db, { cursor: encodeCursor({ startedAt: 5001, id: 'z' }) }).items.map((r) => r.id)).toEqual(['r']);
    const bad = parseRunFilters({ cursor: 'garbage!' });
    expect(bad).toEqual({ ok: false, error: expect.stringMatching(/^query parameter cursor: cursor "garbage!" is not one this list handed out/) });
    expect(parseRunFilters({ cursor: encodeCursor({ startedAt: 1, id: 'x' }) }).ok).toBe(true);
  });

  it('keeps the longer of two rate-limit pauses for a model', () => {
    const { db } = freshDb();
    const s = runStore(db);
    s.setPause('openrouter:a', 5000, '429');
    s.setPause('openrouter:a', 3000, '429 again');
    expect(s.getPause('openrouter:a')).toBe(5000);
    expect(s.getPause('openrouter:b')).toBeNull();
  });
});
