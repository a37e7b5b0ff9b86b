// The what-if's history on both dialects: an agent's last N finished nodes of flow runs (replays
// and limit probes are not its traffic), each with its attempts in order; two index-backed reads.
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, NodePolicy } from '@/lib/engine/types';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { runStore, type RunKind } from './run-store';
import type { Db } from './types';
import { agentNodeHistory } from './what-if-queries';
import { attemptRecord } from '../test/helpers/attempt-record';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };
const POLICY: NodePolicy = { chain: ['sim:a', 'sim:b'], retries: 3, onError: 'fallback', onRefusal: 'fail', onTruncated: 'fail', strict: false };

const attempt = (seq: number, over: Partial<AttemptRecord> = {}) =>
  attemptRecord(seq, { model: 'sim:a', request: [], tries: [], startedAt: 1000 * seq, finishedAt: 1000 * seq + 250, ...over });

interface Seed {
  run: string;
  startedAt: number;
  kind?: RunKind;
  agent?: string;
  status?: 'succeeded' | 'failed' | 'running' | 'skipped';
  attempts?: AttemptRecord[];
  /** attempts started but never finished (cut off) */
  open?: number;
}

async function seed(db: Db, s: Seed) {
  const store = runStore(db);
  const { run, startedAt, kind = 'flow', agent = 'classifier', status = 'succeeded', attempts = [attempt(1)] } = s;
  await store.insertRun({ id: run, project: 'p', flow: 'triage', input: {}, startedAt, kind, ...(kind === 'replay' && { replayOf: null, replayNode: 'classify' }) });
  const durable: Promise<void>[] = [];
  const nr = `${run}-${agent}`;
  store.insertNode({ id: nr, runId: run, nodeId: 'classify', agent, turn: 1, ord: 0, status: status === 'skipped' ? 'skipped' : 'running', policy: POLICY, startedAt });
  if (status !== 'skipped') {
    attempts.forEach((a, i) => {
      const id = `${nr}-${i}`;
      store.startAttempt({ id, nodeRunId: nr, runId: run, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: [], startedAt: a.startedAt });
      if (i < attempts.length - (s.open ?? 0)) durable.push(store.finishAttempt(id, a));
    });
  }
  if (status === 'succeeded' || status === 'failed') {
    const error = status === 'failed' ? { code: 'provider_error', message: 'failed', hint: 'h' } : null;
    store.finishNode({ id: nr, status, output: null, error, usage, finishedAt: startedAt + 50 });
  }
  if (status !== 'running')
    durable.push(store.finishRun({ id: run, status: status === 'failed' ? 'failed' : 'succeeded', output: null, error: null, turns: 1, usage, finishedAt: startedAt + 60 }));
  await store.flush();
  await Promise.all(durable);
}

describe.each(DIALECTS)('the what-if history on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('reads the last N finished nodes of flow runs, newest first, each with its attempts in order', async () => {
    await seed(db, {
      run: 'f1',
      startedAt: 100,
      status: 'succeeded',
      attempts: [
        attempt(1, {
          outcome: 'error',
          cause: 'provider_error',
          action: 'fallback',
          error: { kind: 'provider_error', message: 'x', detail: null },
          usage: { ...usage, costUsd: 0.002 },
        }),
        attempt(2, { model: 'sim:b', chainIndex: 1, answerNo: 1, startedAt: 5000, finishedAt: 5700 }),
      ],
    });
    await seed(db, {
      run: 'f2',
      startedAt: 200,
      status: 'failed',
      attempts: [attempt(1, { outcome: 'error', cause: 'provider_error', error: { kind: 'client_error', message: '404', detail: null } })],
    });
    await seed(db, { run: 'f3', startedAt: 300 });
    // not the agent's traffic: a replay, a limits probe, another agent, a node skipped, a node still running
    await seed(db, { run: 'rp', startedAt: 400, kind: 'replay' });
    await seed(db, { run: 'lm', startedAt: 500, kind: 'limits' });
    await seed(db, { run: 'ot', startedAt: 600, agent: 'writer' });
    await seed(db, { run: 'sk', startedAt: 700, status: 'skipped' });
    await seed(db, { run: 'rn', startedAt: 800, status: 'running' });

    const all = await agentNodeHistory(db, 'classifier', 50);
    expect(all.map((n) => [n.runId, n.status])).toEqual([
      ['f3', 'succeeded'],
      ['f2', 'failed'],
      ['f1', 'succeeded'],
    ]);
    const f1 = all[2]!;
    expect(f1).toMatchObject({ nodeId: 'classify', startedAt: 100, policy: POLICY });
    expect(f1.attempts).toEqual([
      { seq: 1, model: 'sim:a', outcome: 'error', cause: 'provider_error', errorKind: 'provider_error', costUsd: 0.002, durationMs: 250 },
      { seq: 2, model: 'sim:b', outcome: 'ok', cause: null, errorKind: null, costUsd: 0.001, durationMs: 700 },
    ]);
    expect(all[1]!.attempts[0]!.errorKind).toBe('client_error');

    // only the last N
    expect((await agentNodeHistory(db, 'classifier', 2)).map((n) => n.runId)).toEqual(['f3', 'f2']);
    expect(await agentNodeHistory(db, 'classifier', 0)).toEqual([]);
    expect(await agentNodeHistory(db, 'nobody', 10)).toEqual([]);
  });

  it('returns an attempt cut off without an outcome as such (the estimate leaves its node out)', async () => {
    await seed(db, { run: 'cut', startedAt: 10_000, agent: 'cutter', status: 'failed', attempts: [attempt(1), attempt(2)], open: 1 });
    const [node] = await agentNodeHistory(db, 'cutter', 5);
    expect(node!.attempts.map((a) => a.outcome)).toEqual(['ok', null]);
  });

  if (dialect === 'sqlite') {
    it('reads through node_runs_agent_started_idx, newest first without a sort, and attempts_node_run_idx', async () => {
      if (db.dialect !== 'sqlite') return;
      await seed(db, { run: 'pl', startedAt: 20_000, agent: 'planned' });
      const conn = db.$client;
      const seen: string[] = [];
      const prepare = conn.prepare.bind(conn);
      conn.prepare = ((source: string) => {
        seen.push(source);
        return prepare(source);
      }) as typeof conn.prepare;
      try {
        expect(await agentNodeHistory(db, 'planned', 20)).toHaveLength(1);
      } finally {
        conn.prepare = prepare;
      }
      const plans = seen.map((sql) => {
        const params = (sql.match(/\?/g) ?? []).map(() => 'x');
        return (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
      });
      expect(plans).toHaveLength(2);
      expect(plans[0]).toMatch(/SEARCH node_runs USING INDEX node_runs_agent_started_idx \(agent=\?\)/);
      // the newest come first from the index itself: at most the ties on a start are sorted
      expect(plans[0]).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      expect(plans[1]).toMatch(/attempts_node_run_idx/);
    });
  }
});
