import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { agentModelStats, agentStats, recentAgentFailures } from './agent-queries';
import { openDb } from './client';
import { runStore } from './run-store';

const freshDb = () => openDb(join(mkdtempSync(join(tmpdir(), 'aqven-agent-q-')), 'aqven.db'));
const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

function attempt(seq: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    seq, model: 'sim:a', chainIndex: 0, answerNo: seq, outcome: 'ok', finishReason: 'stop', cause: null, action: 'none',
    request: [], responseText: '{}', error: null, validationErrors: [], discarded: false, streamedText: null, usage,
    startedAt: 100 + seq, finishedAt: 110 + seq, tries: [],
    ...over,
  };
}

function seedNode(db: ReturnType<typeof openDb>, runId: string, agent: string, status: 'succeeded' | 'failed', atts: AttemptRecord[], startedAt = 100) {
  const s = runStore(db);
  s.insertRun({ id: runId, project: 'p', flow: 'triage', input: {}, startedAt });
  const nr = `${runId}-${agent}`;
  s.insertNode({ id: nr, runId, nodeId: 'classify', agent, turn: 1, status: 'running', policy: null, startedAt });
  atts.forEach((a, i) => {
    const id = `${nr}-${i}`;
    s.startAttempt({ id, nodeRunId: nr, runId, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: [], startedAt: a.startedAt });
    void s.finishAttempt(id, a);
  });
  const error = status === 'failed' ? { code: 'refusal', message: 'refused', hint: 'Set output.on_refusal' } : null;
  s.finishNode({ id: nr, status, output: null, error, usage, finishedAt: startedAt + 50 });
  s.flush();
}

describe('agent statistics', () => {
  it('counts node runs by status and attempts by outcome, cause and action', () => {
    const db = freshDb();
    seedNode(db, 'r1', 'classifier', 'succeeded', [
      attempt(1, { outcome: 'error', cause: 'provider_error', action: 'fallback', discarded: true }),
      attempt(2, { model: 'sim:b', chainIndex: 1, answerNo: 1 }),
    ]);
    seedNode(db, 'r2', 'classifier', 'failed', [attempt(1, { outcome: 'refusal', cause: 'refusal', action: 'none' })], 200);
    seedNode(db, 'r3', 'writer', 'succeeded', [attempt(1, { cause: 'invalid_output', action: 'repair' }), attempt(2)]);
    const [classifier, writer] = agentStats(db);
    expect(classifier).toMatchObject({
      agent: 'classifier',
      nodes: { succeeded: 1, failed: 1 },
      nodesTotal: 2,
      attempts: 3,
      byOutcome: { ok: 1, error: 1, refusal: 1 },
      byCause: { provider_error: 1, refusal: 1 },
      byAction: { fallback: 1, none: 2 },
      inputTokens: 30,
      costUsd: 0.003,
      lastRunAt: 200,
    });
    expect(writer).toMatchObject({ agent: 'writer', byOutcome: { ok: 2 }, byCause: { invalid_output: 1 }, byAction: { repair: 1, none: 1 } });
    expect(agentStats(db, { agent: 'writer' }).map((s) => s.agent)).toEqual(['writer']);
    expect(agentModelStats(db, 'classifier')).toEqual([
      { model: 'sim:a', attempts: 2, byOutcome: { error: 1, refusal: 1 }, invalid: 0 },
      { model: 'sim:b', attempts: 1, byOutcome: { ok: 1 }, invalid: 0 },
    ]);
    expect(recentAgentFailures(db, 'classifier')).toEqual([
      { runId: 'r2', flow: 'triage', nodeId: 'classify', errorCode: 'refusal', errorMessage: 'refused', startedAt: 200 },
    ]);
  });
});
