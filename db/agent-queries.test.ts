// Agent statistics on both dialects (PostgreSQL answers sums over bigint as strings: read as numbers).
// They read the daily sums the run store keeps; they must say what a scan of every attempt and node
// run of the flow runs says, and count no replay.
import { and, count, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { roundCost } from '@/lib/engine/usage';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { agentModelStats, agentStats, recentAgentFailures, type AgentStats } from './agent-queries';
import { runStore, type RunKind } from './run-store';
import type { Db } from './types';
import { attemptRecord } from '../test/helpers/attempt-record';

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

const attempt = (seq: number, over: Partial<AttemptRecord> = {}) =>
  attemptRecord(seq, { model: 'sim:a', request: [], tries: [], startedAt: 100 + seq, finishedAt: 110 + seq, ...over });

async function seedNode(db: Db, runId: string, agent: string, status: 'succeeded' | 'failed', atts: AttemptRecord[], startedAt = 100, kind: RunKind = 'flow') {
  const s = runStore(db);
  await s.insertRun({ id: runId, project: 'p', flow: 'triage', input: {}, startedAt, kind });
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

/** The statistics as a scan of every attempt and node run of the flow runs gives them (how they were read before the daily sums). */
async function scanAgentStats(db: Db): Promise<AgentStats[]> {
  const { attempts, nodeRuns, runs } = db.t;
  const out = new Map<string, AgentStats>();
  const get = (agent: string) => {
    let s = out.get(agent);
    if (!s)
      out.set(
        agent,
        (s = { agent, nodes: {}, nodesTotal: 0, attempts: 0, byOutcome: {}, byCause: {}, byAction: {}, inputTokens: 0, outputTokens: 0, costUsd: 0, lastRunAt: null }),
      );
    return s;
  };
  const nodes = await db.q
    .select({ agent: nodeRuns.agent, status: nodeRuns.status, n: count(), last: sql<number | null>`max(${nodeRuns.startedAt})`.mapWith(Number) })
    .from(nodeRuns)
    .innerJoin(runs, eq(runs.id, nodeRuns.runId))
    .where(eq(runs.kind, 'flow'))
    .groupBy(nodeRuns.agent, nodeRuns.status);
  for (const r of nodes) {
    const s = get(r.agent);
    s.nodes[r.status] = r.n;
    s.nodesTotal += r.n;
    if (r.last != null) s.lastRunAt = Math.max(s.lastRunAt ?? 0, r.last);
  }
  const atts = await db.q
    .select({
      agent: nodeRuns.agent,
      outcome: attempts.outcome,
      cause: attempts.cause,
      action: attempts.action,
      i: attempts.inputTokens,
      o: attempts.outputTokens,
      c: attempts.costUsd,
    })
    .from(attempts)
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .innerJoin(runs, eq(runs.id, attempts.runId))
    .where(and(eq(runs.kind, 'flow'), isNotNull(attempts.outcome)));
  for (const a of atts) {
    const s = get(a.agent);
    s.attempts++;
    s.byOutcome[a.outcome!] = (s.byOutcome[a.outcome!] ?? 0) + 1;
    if (a.cause) s.byCause[a.cause] = (s.byCause[a.cause] ?? 0) + 1;
    s.byAction[a.action ?? 'none'] = (s.byAction[a.action ?? 'none'] ?? 0) + 1;
    s.inputTokens += a.i;
    s.outputTokens += a.o;
    s.costUsd += a.c;
  }
  for (const s of out.values()) s.costUsd = roundCost(s.costUsd);
  return [...out.values()].sort((a, b) => a.agent.localeCompare(b.agent));
}

describe.each(DIALECTS)('agent statistics from the daily sums on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  const DAY = 86_400_000;
  const T = Date.UTC(2026, 4, 1);

  it('say what a scan of the flow runs says, over days, models and a run still going', async () => {
    let k = 0;
    for (let day = 0; day < 3; day++) {
      for (const agent of ['classifier', 'writer', 'auditor']) {
        const at = T + day * DAY + 3_600_000 * (k % 7);
        await seedNode(
          db,
          `s${k++}`,
          agent,
          'succeeded',
          [attempt(1, { startedAt: at, finishedAt: at + 30 }), attempt(2, { model: 'sim:b', startedAt: at + 40, finishedAt: at + 90 })],
          at,
        );
        await seedNode(
          db,
          `s${k++}`,
          agent,
          'failed',
          [
            attempt(1, {
              outcome: 'truncated',
              cause: 'truncated',
              action: 'retry',
              discarded: true,
              startedAt: at,
              finishedAt: at + 5,
              usage: { inputTokens: 3, outputTokens: 900, costUsd: 0.0301 },
            }),
            attempt(2, { cause: 'invalid_output', action: 'none', discarded: true, startedAt: at + 10, finishedAt: at + 20 }),
          ],
          at + 1,
        );
      }
    }
    // a run still going: its running node is counted live, its attempt in flight not at all
    const s = runStore(db);
    await s.insertRun({ id: 'going', project: 'p', flow: 'triage', input: {}, startedAt: T + 5 * DAY });
    s.insertNode({ id: 'going-n', runId: 'going', nodeId: 'classify', agent: 'writer', turn: 1, ord: 0, status: 'running', policy: null, startedAt: T + 5 * DAY });
    s.startAttempt({ id: 'going-a', nodeRunId: 'going-n', runId: 'going', seq: 1, model: 'sim:a', chainIndex: 0, answerNo: 1, request: [], startedAt: T + 5 * DAY });
    await s.flush();

    const stats = await agentStats(db);
    expect(stats).toEqual(await scanAgentStats(db));
    expect(stats.find((x) => x.agent === 'writer')).toMatchObject({ nodes: { running: 1 }, lastRunAt: T + 5 * DAY });
    expect(await agentStats(db, { agent: 'auditor' })).toEqual((await scanAgentStats(db)).filter((x) => x.agent === 'auditor'));
    expect(await agentModelStats(db, 'auditor')).toEqual([
      { model: 'sim:a', attempts: 9, byOutcome: { ok: 6, truncated: 3 }, invalid: 3 },
      { model: 'sim:b', attempts: 3, byOutcome: { ok: 3 }, invalid: 0 },
    ]);
  });

  it('count no replay: its nodes, attempts and failures are left out', async () => {
    const [stats, models, failures] = await Promise.all([agentStats(db), agentModelStats(db, 'auditor'), recentAgentFailures(db, 'auditor', 100)]);
    const at = T + 9 * DAY;
    await seedNode(
      db,
      'replay-1',
      'auditor',
      'failed',
      [attempt(1, { outcome: 'refusal', cause: 'refusal', action: 'none', discarded: true, startedAt: at, finishedAt: at + 9 })],
      at,
      'replay',
    );
    await seedNode(db, 'limits-1', 'auditor', 'succeeded', [attempt(1, { startedAt: at, finishedAt: at + 9 })], at, 'limits');
    expect(await agentStats(db)).toEqual(stats);
    expect(await agentModelStats(db, 'auditor')).toEqual(models);
    expect(await recentAgentFailures(db, 'auditor', 100)).toEqual(failures);
    // the replay is recorded all the same
    const { nodeRuns } = db.t;
    expect(
      await db.q
        .select({ n: count() })
        .from(nodeRuns)
        .where(inArray(nodeRuns.runId, ['replay-1', 'limits-1'])),
    ).toEqual([{ n: 2 }]);
  });
});
