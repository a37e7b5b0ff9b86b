import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeDb, openDb } from '@/db/client';
import { runStore } from '@/db/run-store';
import { getRunRecord } from '@/lib/flow/stored-run';
import { attemptRecord } from '../helpers/attempt-record';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

const attempt = attemptRecord;

describe('a stored run as its run record', () => {
  it('reads attempts and tries in order, times as ISO strings; null for an unknown id', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'aqven-db-')), 'aqven.db');
    const db = openDb(path);
    const s = runStore(db);
    s.insertRun({ id: 'r', project: 'p', flow: 'triage', input: { x: 1 }, startedAt: 5000 });
    s.insertNode({ id: 'r-n', runId: 'r', nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: 5000 });
    const atts = [attempt(1, { outcome: 'truncated', cause: 'truncated', action: 'retry', discarded: true }), attempt(2)];
    atts.forEach((a, i) => {
      s.startAttempt({
        id: `r-a${i}`,
        nodeRunId: 'r-n',
        runId: 'r',
        seq: a.seq,
        model: a.model,
        chainIndex: a.chainIndex,
        answerNo: a.answerNo,
        request: a.request,
        startedAt: a.startedAt,
      });
      void s.finishAttempt(`r-a${i}`, a);
    });
    s.finishNode({ id: 'r-n', status: 'succeeded', output: { ok: true }, error: null, usage, finishedAt: 5005 });
    void s.finishRun({ id: 'r', status: 'succeeded', output: null, error: null, turns: 1, usage, finishedAt: 5010 });
    s.flush();

    const rec = (await getRunRecord(db, 'r'))!;
    expect(rec.nodes[0]!.attempts.map((a) => [a.seq, a.outcome, a.action, a.discarded])).toEqual([
      [1, 'truncated', 'retry', true],
      [2, 'ok', 'none', false],
    ]);
    expect(rec.nodes[0]!.attempts[0]!.transport).toEqual([{ try: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, discardedText: null }]);
    expect(rec.nodes[0]!.usage).toEqual({ inputTokens: 20, outputTokens: 10, costUsd: 0.002 });
    expect(rec.startedAt).toBe(new Date(5000).toISOString());
    expect(await getRunRecord(db, 'missing')).toBeNull();
    await closeDb(path);
  });
});
