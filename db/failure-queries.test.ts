// Failure groups on both dialects: what /failures shows for a history where one agent fails the
// same way in several runs — counted exactly inside the window, flow runs only, with the newest
// examples and their routed-around mark — and, on SQLite, that the reads go through the indexes.
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { attemptSignature, nodeSignature } from './run-aggregates';
import * as schema from './schema';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { seedRuns, type SeedRun } from '../test/helpers/seed-history';
import { failureAgents, failureGroupNodes, failureGroups, windowDays } from './failure-queries';
import type { Db } from './types';

const H = 3_600_000;
const DAY = 24 * H;
/** noon UTC: a 24 h window ending here touches two UTC days, each partly */
const T = Date.UTC(2026, 5, 15, 12);
const M1 = 'openrouter:google/gemini-2.5-flash-lite';
const overloaded = (id: string) => `the model ended the response with an error: upstream overloaded (request req_${id})`;
const ALL_FAILED = 'every model of the chain failed: provider_error';

const classifyFails = (at: number, ids: string[], nodeFails: boolean): SeedRun['nodes'][number] => ({
  nodeId: 'classify',
  agent: 'classifier',
  status: nodeFails ? 'failed' : 'succeeded',
  startedAt: at,
  error: nodeFails ? { code: 'provider_error', message: ALL_FAILED } : undefined,
  attempts: [
    ...ids.map((id, i) => ({ model: M1, cause: 'provider_error' as const, message: overloaded(id), costUsd: 0.001, startedAt: at + i * 10 })),
    ...(nodeFails ? [] : [{ model: 'sim:b', costUsd: 0.002, startedAt: at + 50 }]),
  ],
});

const HISTORY: SeedRun[] = [
  // routed around: classify failed, manual_review answered, the run succeeded
  {
    id: 'r1',
    status: 'succeeded',
    startedAt: T - 1 * H,
    nodes: [
      classifyFails(T - 1 * H, ['a1b2c3d4e5', 'f6a7b8c9d0'], true),
      { nodeId: 'manual_review', agent: 'writer', status: 'succeeded', startedAt: T - H + 100, attempts: [{ startedAt: T - H + 100 }] },
    ],
  },
  { id: 'r2', status: 'succeeded', startedAt: T - 2 * H, nodes: [classifyFails(T - 2 * H, ['0011223344'], false)] },
  { id: 'r3', status: 'succeeded', startedAt: T - 3 * H, nodes: [classifyFails(T - 3 * H, ['5566778899'], false)] },
  {
    id: 'r4',
    status: 'failed',
    startedAt: T - 4 * H,
    nodes: [
      {
        nodeId: 'draft',
        agent: 'writer',
        status: 'failed',
        startedAt: T - 4 * H,
        error: { code: 'refusal', message: 'the model refused' },
        attempts: [{ cause: 'refusal', message: 'I cannot help with that', costUsd: 0.003, startedAt: T - 4 * H + 5 }],
      },
    ],
  },
  // the same UTC day as the window's start, an hour before it: in the daily sums, not in the window
  { id: 'early', status: 'succeeded', startedAt: T - 25 * H, nodes: [classifyFails(T - 25 * H, ['9988776655'], false)] },
  // three days back: inside 7 days only
  { id: 'old', status: 'succeeded', startedAt: T - 3 * DAY, nodes: [classifyFails(T - 3 * DAY, ['4433221100'], false)] },
  // a replay fails the same way in the window: never counted, never an example
  { id: 'rp', kind: 'replay', replayOf: 'r1', status: 'failed', startedAt: T - H / 2, nodes: [classifyFails(T - H / 2, ['1212121212'], true)] },
];

const ATTEMPT_SIG = attemptSignature('classifier', { model: M1, cause: 'provider_error', errorMessage: overloaded('x0x0x0x0x0') }).sig;
const NODE_SIG = nodeSignature('classifier', { code: 'provider_error', message: ALL_FAILED }).sig;

describe('windowDays', () => {
  it('splits a window into whole UTC days and the parts of days at its ends', () => {
    const d0 = Date.UTC(2026, 5, 14);
    expect(windowDays(d0 + 12 * H, d0 + DAY + 12 * H)).toEqual({
      full: null,
      partial: [
        { day: d0, from: d0 + 12 * H, to: d0 + DAY },
        { day: d0 + DAY, from: d0 + DAY, to: d0 + DAY + 12 * H },
      ],
    });
    expect(windowDays(d0 - 2 * DAY, d0 + DAY)).toEqual({ full: { from: d0 - 2 * DAY, to: d0 + DAY }, partial: [] });
    expect(windowDays(d0 + H)).toEqual({ full: { from: d0 + DAY, to: null }, partial: [{ day: d0, from: d0 + H, to: d0 + DAY }] });
    // both ends inside one day, the start on its midnight
    expect(windowDays(d0, d0 + 5 * H)).toEqual({ full: null, partial: [{ day: d0, from: d0, to: d0 + 5 * H }] });
    expect(windowDays(d0 + H, d0 + 5 * H)).toEqual({ full: null, partial: [{ day: d0, from: d0 + H, to: d0 + 5 * H }] });
  });
});

describe.each(DIALECTS)('failure groups on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('groups the failures of the last 24 hours by signature, largest first, counting only flow runs inside the window', async () => {
    await seedRuns(db, HISTORY);
    const groups = await failureGroups(db, { since: T - DAY, until: T });
    expect(groups.map((g) => [g.level, g.agent, g.code, g.failures])).toEqual([
      // 2 + 1 + 1 attempts in r1–r3; not the one 25 h ago (same UTC day), nor the replay's
      ['attempt', 'classifier', 'provider_error', 4],
      ['node', 'classifier', 'provider_error', 1],
      ['attempt', 'writer', 'refusal', 1],
      ['node', 'writer', 'refusal', 1],
    ]);
    const [top] = groups;
    expect(top).toMatchObject({
      sig: ATTEMPT_SIG,
      model: M1,
      message: 'the model ended the response with an error: upstream overloaded (request <id>)',
      costUsd: 0.004,
      // first seen before the window: the failure 3 days ago; last seen: r1's second attempt
      firstAt: T - 3 * DAY,
      lastAt: T - H + 10,
    });
    // over the two UTC days the window touches: 5 failed attempts (with the one 25 h ago) of 8
    expect(top!.share).toBeCloseTo(5 / 8, 6);
    // a node group: failed nodes of the agent's finished nodes on those days (1 of 4)
    expect(groups[1]!.share).toBeCloseTo(1 / 4, 6);
  });

  it('shows a week of daily counts as the trend, and the newest examples with the run that routed around its failure', async () => {
    const [top, node] = await failureGroups(db, { since: T - DAY, until: T });
    const day = (ms: number) => Math.floor(ms / DAY) * DAY;
    expect(top!.trend).toHaveLength(7);
    expect(top!.trend[0]!.day).toBe(day(T) - 6 * DAY);
    expect(top!.trend.filter((d) => d.failures > 0)).toEqual([
      { day: day(T - 3 * DAY), failures: 1 },
      { day: day(T - 25 * H), failures: 1 },
      { day: day(T), failures: 4 },
    ]);
    // one example per node, newest first; r1 retried into the same failure twice: its newest attempt
    expect(top!.examples).toEqual([
      { runId: 'r1', nodeRunId: 'r1-classify', nodeId: 'classify', startedAt: T - H + 10, routedAround: true, attemptSeq: 2 },
      { runId: 'r2', nodeRunId: 'r2-classify', nodeId: 'classify', startedAt: T - 2 * H, routedAround: false, attemptSeq: 1 },
      { runId: 'r3', nodeRunId: 'r3-classify', nodeId: 'classify', startedAt: T - 3 * H, routedAround: false, attemptSeq: 1 },
    ]);
    expect(node!.sig).toBe(NODE_SIG);
    expect(node!.examples).toEqual([{ runId: 'r1', nodeRunId: 'r1-classify', nodeId: 'classify', startedAt: T - H, routedAround: true }]);
    expect((await failureGroups(db, { since: T - DAY, until: T, examples: 1 }))[0]!.examples.map((e) => e.runId)).toEqual(['r1']);
  });

  it('widens with the window, filters by agent and limits the groups', async () => {
    const week = await failureGroups(db, { since: T - 7 * DAY, until: T });
    expect(week[0]).toMatchObject({ sig: ATTEMPT_SIG, failures: 6, costUsd: 0.006 });
    // the UTC days the window touches: 8, the first of them in part
    expect(week[0]!.trend).toHaveLength(8);
    const writer = await failureGroups(db, { since: T - DAY, until: T, agent: 'writer' });
    expect(writer.map((g) => [g.level, g.code, g.message])).toEqual([
      ['attempt', 'refusal', 'I cannot help with that'],
      ['node', 'refusal', 'the model refused'],
    ]);
    expect(await failureGroups(db, { since: T - DAY, until: T, limit: 1 })).toHaveLength(1);
    // a window after every failure, and one before them
    expect(await failureGroups(db, { since: T + H, until: T + 2 * H })).toEqual([]);
    expect(await failureGroups(db, { since: T - 30 * DAY, until: T - 20 * DAY })).toEqual([]);
    expect(await failureAgents(db, T - DAY)).toEqual(['classifier', 'writer']);
  });

  it('lists the failed nodes of one group for a replay: the nodes of an attempt group, the failed nodes of a node group', async () => {
    const attemptNodes = await failureGroupNodes(db, ATTEMPT_SIG, { since: T - DAY, limit: 10 });
    expect(attemptNodes).toEqual([
      { runId: 'r1', nodeRunId: 'r1-classify', nodeId: 'classify', agent: 'classifier', flow: 'triage', startedAt: T - H + 10 },
      { runId: 'r2', nodeRunId: 'r2-classify', nodeId: 'classify', agent: 'classifier', flow: 'triage', startedAt: T - 2 * H },
      { runId: 'r3', nodeRunId: 'r3-classify', nodeId: 'classify', agent: 'classifier', flow: 'triage', startedAt: T - 3 * H },
    ]);
    expect((await failureGroupNodes(db, ATTEMPT_SIG, { since: T - 7 * DAY, limit: 2 })).map((n) => n.runId)).toEqual(['r1', 'r2']);
    expect(await failureGroupNodes(db, NODE_SIG, { since: T - DAY, limit: 10 })).toEqual([
      { runId: 'r1', nodeRunId: 'r1-classify', nodeId: 'classify', agent: 'classifier', flow: 'triage', startedAt: T - H },
    ]);
    expect(await failureGroupNodes(db, 'ffffffffffffffff', { since: 0, limit: 10 })).toEqual([]);
  });

  it.runIf(dialect === 'sqlite')('reads attempts and nodes only through their failure_sig index', async () => {
    if (db.dialect !== 'sqlite') return;
    const statements: { sql: string; params: unknown[] }[] = [];
    const logged: Db = { ...db, q: drizzle(db.$client, { schema, logger: { logQuery: (sql, params) => void statements.push({ sql, params }) } }) };
    await failureGroups(logged, { since: T - DAY, until: T });
    await failureGroupNodes(logged, ATTEMPT_SIG, { since: T - DAY, limit: 10 });
    await failureGroupNodes(logged, NODE_SIG, { since: T - DAY, limit: 10 });
    const touching = statements.filter((s) => /from "(attempts|node_runs)"/.test(s.sql));
    expect(touching.length).toBeGreaterThan(3);
    for (const s of touching) {
      const plan = (db.$client.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).all(...(s.params as unknown[])) as { detail: string }[]).map((r) => r.detail).join('\n');
      expect(plan, s.sql).toMatch(/(attempts|node_runs)_failure_idx/);
      expect(plan, s.sql).not.toMatch(/^SCAN (attempts|node_runs|runs)\b/m);
    }
  });
});
