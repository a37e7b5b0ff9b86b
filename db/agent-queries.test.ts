// Agent statistics on both dialects (PostgreSQL answers sums over bigint as strings: read as numbers).
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { agentModelStats, agentStats, recentAgentFailures } from './agent-queries';
import { runStore } from './run-store';
import type { Db } from './types';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

function attempt(seq: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    seq, model: 'sim:a', chainIndex: 0, answerNo: seq, outcome: 'ok', finishReason: 'stop', cause: null, action: 'none',
    request: [], responseText: '{}', error: null, validationErrors: [], discarded: false, streamedText: null, usage,
    startedAt: 100 + seq, finishedAt: 110 + seq, tries: [],
    ...over,
  };
}

async function seedNode(db: Db, runId: string, agent: string, status: 'succeeded' | 'failed', atts: AttemptRecord[], startedAt = 100) {
  const s = runStore(db);
  await s.insertRun({ id: runId, project: 'p', flow: 'triage', input: {}, startedAt });
  const durable: Promise<void>[] = [];
  const nr = `${runId}-${agent}`;
  s.insertNode({ id: nr, runId, nodeId: 'classify', agent, turn: 1, ord: 0, status: 'running', policy: null, startedAt });
  atts.forEach((a, i) => {
    const id = `${nr}-${i}`;
    s.startAttempt({ id, nodeRunId: nr, runId, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: [], startedAt: a.startedAt });
    durable.push(s.finishAttempt(id, a));
  });
  const error = status === 'failed' ? { code: 'refusal', message: 'refused', hint: 'Set output.on_refusal' } : null;
  s.finishNode({ id: nr, status, output: null, error, usage, finishedAt: startedAt + 50 });
  durable.push(s.finishRun({ id: runId, status, output: null, error: null, turns: 1, usage, finishedAt: startedAt + 60 }));
  await s.flush();
  await Promise.all(durable);
}

describe.each(DIALECTS)('agent statistics on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('counts node runs by status and attempts by outcome, cause and action', async () => {
    await seedNode(db, 'r1', 'classifier', 'succeeded', [
      attempt(1, { outcome: 'error', cause: 'provider_error', action: 'fallback', discarded: true }),
      attempt(2, { model: 'sim:b', chainIndex: 1, answerNo: 1 }),
    ]);
    await seedNode(db, 'r2', 'classifier', 'failed', [attempt(1, { outcome: 'refusal', cause: 'refusal', action: 'none' })], 200);
    await seedNode(db, 'r3', 'writer', 'succeeded', [attempt(1, { cause: 'invalid_output', action: 'repair' }), attempt(2)]);
    const [classifier, writer] = await agentStats(db);
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
    expect((await agentStats(db, { agent: 'writer' })).map((s) => s.agent)).toEqual(['writer']);
    expect(await agentModelStats(db, 'classifier')).toEqual([
      { model: 'sim:a', attempts: 2, byOutcome: { error: 1, refusal: 1 }, invalid: 0 },
      { model: 'sim:b', attempts: 1, byOutcome: { ok: 1 }, invalid: 0 },
    ]);
    expect(await agentModelStats(db, 'writer')).toEqual([{ model: 'sim:a', attempts: 2, byOutcome: { ok: 2 }, invalid: 1 }]);
    expect(await recentAgentFailures(db, 'classifier')).toEqual([
      { runId: 'r2', flow: 'triage', nodeId: 'classify', errorCode: 'refusal', errorMessage: 'refused', startedAt: 200 },
    ]);
  });
});
