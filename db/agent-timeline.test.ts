// One agent over time on both dialects: the daily sums of its attempts inside the window (and no
// other agent's, day or run kind), its policy saves inside the window, and — through the run store —
// the spend on dropped attempts the run header shows for the same attempts.
import { describe, expect, it } from 'vitest';
import { runSpend } from '@/lib/dashboard/run-view';
import { timelineView } from '@/lib/dashboard/agent-timeline';
import type { AttemptRecord } from '@/lib/engine/types';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { agentTimeline } from './agent-timeline';
import { recordPolicyRevision } from './policy-queries';
import { getRunFacts } from './queries';
import { runStore, type RunKind } from './run-store';
import type { AgentDailyRow } from './schema';
import type { Db } from './types';
import { attemptRecord } from '../test/helpers/attempt-record';

const DAY = 86_400_000;
const TODAY = Date.UTC(2026, 4, 30);
const NOW = TODAY + 15 * 3_600_000;

function daily(over: Partial<AgentDailyRow>): AgentDailyRow {
  return {
    agent: 'classifier',
    day: TODAY,
    model: 'sim:a',
    outcome: 'ok',
    cause: '',
    action: 'none',
    attempts: 1,
    inputTokens: 10,
    outputTokens: 5,
    costUsd: 0.001,
    durationMs: 100,
    ...over,
  };
}

const attempt = (seq: number, over: Partial<AttemptRecord> = {}) =>
  attemptRecord(seq, { model: 'sim:a', request: [], tries: [], startedAt: NOW + seq, finishedAt: NOW + seq + 10, ...over });

/** one run of one node of the `router` agent (the tests before it wrote classifier's sums) */
async function seedRun(db: Db, runId: string, atts: AttemptRecord[], kind: RunKind = 'flow') {
  const s = runStore(db);
  await s.insertRun({ id: runId, project: 'p', flow: 'triage', input: {}, startedAt: NOW, kind });
  const durable: Promise<void>[] = [];
  const nr = `${runId}-n`;
  s.insertNode({ id: nr, runId, nodeId: 'route', agent: 'router', turn: 1, ord: 0, status: 'running', policy: null, startedAt: NOW });
  atts.forEach((a, i) => {
    const id = `${nr}-${i}`;
    s.startAttempt({ id, nodeRunId: nr, runId, seq: a.seq, model: a.model, chainIndex: a.chainIndex, answerNo: a.answerNo, request: [], startedAt: a.startedAt });
    durable.push(s.finishAttempt(id, a));
  });
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  s.finishNode({ id: nr, status: 'succeeded', output: null, error: null, usage, finishedAt: NOW + 50 });
  durable.push(s.finishRun({ id: runId, status: 'succeeded', output: null, error: null, turns: 1, usage, finishedAt: NOW + 60 }));
  await s.flush();
  await Promise.all(durable);
}

describe.each(DIALECTS)('agentTimeline on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('sums one agent’s attempts per day over its models, inside the window only', async () => {
    await db.q.insert(db.t.agentDaily).values([
      daily({ attempts: 5, costUsd: 0.005 }),
      daily({ model: 'sim:b', attempts: 2, costUsd: 0.004 }),
      daily({ outcome: 'error', cause: 'provider_error', action: 'retry', attempts: 3, costUsd: 0 }),
      daily({ day: TODAY - 29 * DAY, outcome: 'ok', cause: 'invalid_output', action: 'repair', attempts: 4, costUsd: 0.02 }),
      // outside: the day before the window, another agent
      daily({ day: TODAY - 30 * DAY, attempts: 99 }),
      daily({ agent: 'writer', attempts: 77 }),
    ]);
    const t = await agentTimeline(db, 'classifier', { now: NOW, days: 30 });
    expect(t.from).toBe(TODAY - 29 * DAY);
    expect(t.to).toBe(TODAY + DAY);
    expect(t.rows).toEqual([
      { day: TODAY - 29 * DAY, outcome: 'ok', cause: 'invalid_output', action: 'repair', attempts: 4, costUsd: 0.02 },
      { day: TODAY, outcome: 'error', cause: 'provider_error', action: 'retry', attempts: 3, costUsd: 0 },
      { day: TODAY, outcome: 'ok', cause: '', action: 'none', attempts: 7, costUsd: expect.closeTo(0.009, 9) },
    ]);
    expect(typeof t.rows[0].day).toBe('number');
    expect((await agentTimeline(db, 'nobody', { now: NOW })).rows).toEqual([]);
  });

  it('lists the policy saves inside the window, oldest first', async () => {
    await recordPolicyRevision(db, { agent: 'classifier', yaml: 'a', diff: '', createdAt: TODAY - 40 * DAY });
    await recordPolicyRevision(db, { agent: 'classifier', yaml: 'b', diff: '', author: 'ana', createdAt: TODAY - 3 * DAY + 5000 });
    await recordPolicyRevision(db, { agent: 'classifier', yaml: 'c', diff: '', author: 'bo', createdAt: NOW - 1000 });
    await recordPolicyRevision(db, { agent: 'writer', yaml: 'w', diff: '', createdAt: NOW - 2000 });
    const t = await agentTimeline(db, 'classifier', { now: NOW, days: 30 });
    expect(t.revisions).toEqual([
      { revision: 2, createdAt: TODAY - 3 * DAY + 5000, author: 'ana' },
      { revision: 3, createdAt: NOW - 1000, author: 'bo' },
    ]);
    const view = timelineView(t);
    expect(view.marks.map((m) => [m.day, m.revisions.map((r) => r.revision)])).toEqual([
      [TODAY - 3 * DAY, [2]],
      [TODAY, [3]],
    ]);
  });

  it('spends on dropped attempts what the run header says the same runs dropped, and counts no replay', async () => {
    const runs: [string, AttemptRecord[]][] = [
      [
        'retried',
        [attempt(1, { outcome: 'error', cause: 'provider_error', action: 'retry', discarded: true, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0.002 } }), attempt(2)],
      ],
      ['repaired', [attempt(1, { cause: 'invalid_output', action: 'repair', discarded: true, usage: { inputTokens: 40, outputTokens: 30, costUsd: 0.0123 } }), attempt(2)]],
      [
        'fell-back',
        [
          attempt(1, { outcome: 'truncated', cause: 'truncated', action: 'fallback', discarded: true, usage: { inputTokens: 9, outputTokens: 800, costUsd: 0.031 } }),
          attempt(2, { model: 'sim:b', chainIndex: 1, answerNo: 1 }),
        ],
      ],
      ['clean', [attempt(1)]],
    ];
    for (const [id, atts] of runs) await seedRun(db, id, atts);
    await seedRun(
      db,
      'a-replay',
      [attempt(1, { outcome: 'refusal', cause: 'refusal', action: 'retry', discarded: true, usage: { inputTokens: 1, outputTokens: 1, costUsd: 5 } }), attempt(2)],
      'replay',
    );

    let header = 0;
    let headerAttempts = 0;
    for (const [id] of runs) {
      const spend = runSpend((await getRunFacts(db, id))!);
      header += spend.dropped.costUsd;
      headerAttempts += spend.dropped.attempts;
    }
    const view = timelineView(await agentTimeline(db, 'router', { now: NOW }));
    const today = view.days.at(-1)!;
    expect(today.day).toBe(TODAY);
    expect(today.droppedAttempts).toBe(headerAttempts);
    expect(today.droppedAttempts).toBe(3);
    expect(today.droppedCostUsd).toBeCloseTo(header, 9);
    expect(today.counts).toEqual({ ok: 4, invalid: 1, error: 1, refusal: 0, truncated: 1 });
    expect(view.totals.attempts).toBe(7);
  });
});
