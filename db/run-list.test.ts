// The run list's marks and cheap filter values on both dialects: a run that succeeded by routing
// around a failed node is marked, a replay names its original, the kind filter narrows the list,
// and the dropdowns' values are read by index seeks (checked on SQLite's query plans).
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { parseRunFilters } from '@/lib/dashboard/run-filters';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { seedRuns } from '../test/helpers/seed-history';
import { filterChoices, listRuns } from './queries';
import * as schema from './schema';
import type { Db } from './types';

const T = Date.UTC(2026, 5, 15, 12);

describe.each(DIALECTS)('run list on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('marks a run routed around a failed node, and a replay with its original', async () => {
    await seedRuns(db, [
      {
        id: 'routed',
        status: 'succeeded',
        startedAt: T,
        nodes: [
          {
            nodeId: 'classify',
            agent: 'classifier',
            status: 'failed',
            startedAt: T,
            error: { code: 'refusal', message: 'refused' },
            attempts: [{ cause: 'refusal', startedAt: T }],
          },
          { nodeId: 'manual_review', agent: 'writer', status: 'succeeded', startedAt: T + 10, attempts: [{ model: 'sim:b', startedAt: T + 10 }] },
        ],
      },
      {
        id: 'plain',
        flow: 'extract',
        status: 'succeeded',
        startedAt: T + 1,
        nodes: [{ nodeId: 'classify', agent: 'classifier', status: 'succeeded', startedAt: T + 1, attempts: [{ startedAt: T + 1 }] }],
      },
      // failed with a failed node: a failure, not a route around one
      {
        id: 'failed',
        status: 'failed',
        startedAt: T + 2,
        nodes: [
          {
            nodeId: 'draft',
            agent: 'writer',
            status: 'failed',
            startedAt: T + 2,
            error: { code: 'truncated', message: 'cut' },
            attempts: [{ cause: 'truncated', model: 'sim:c', startedAt: T + 2 }],
          },
        ],
      },
      {
        id: 'replay',
        kind: 'replay',
        replayOf: 'routed',
        status: 'succeeded',
        startedAt: T + 3,
        nodes: [{ nodeId: 'classify', agent: 'classifier', status: 'succeeded', startedAt: T + 3, attempts: [{ startedAt: T + 3 }] }],
      },
    ]);
    const { items } = await listRuns(db);
    expect(items.map((r) => [r.id, r.kind, r.routedAround, r.replayOf])).toEqual([
      ['replay', 'replay', false, 'routed'],
      ['failed', 'flow', false, null],
      ['plain', 'flow', false, null],
      ['routed', 'flow', true, null],
    ]);
  });

  it('narrows the list to one kind of run through the URL', async () => {
    const ids = async (query: string) => {
      const parsed = parseRunFilters(new URLSearchParams(query));
      if (!parsed.ok) throw new Error(parsed.error);
      return (await listRuns(db, { filters: parsed.filters })).items.map((r) => r.id);
    };
    expect(await ids('kind=replay')).toEqual(['replay']);
    expect(await ids('kind=flow')).toEqual(['failed', 'plain', 'routed']);
    expect(await ids('kind=flow&status=succeeded')).toEqual(['plain', 'routed']);
    expect(parseRunFilters(new URLSearchParams('kind=nope'))).toMatchObject({ ok: false, error: expect.stringMatching(/^query parameter kind: /) });
    for (const bad of ['abc', '0', '501', '2.5'])
      expect(parseRunFilters(new URLSearchParams(`limit=${bad}`))).toEqual({
        ok: false,
        error: 'query parameter limit: must be a whole number from 1 to 500',
        param: 'limit',
        reason: 'must be a whole number from 1 to 500',
      });
  });

  it('offers the flows, agents and models of the history, in order, and every cause', async () => {
    expect(await filterChoices(db)).toEqual({
      flows: ['extract', 'triage'],
      agents: ['classifier', 'writer'],
      models: ['sim:a', 'sim:b', 'sim:c'],
      causes: ['provider_error', 'refusal', 'truncated', 'invalid_output', 'quota'],
    });
  });

  it.runIf(dialect === 'sqlite')('reads the filter values and the list page by index, never a scan of nodes or attempts', async () => {
    if (db.dialect !== 'sqlite') return;
    const statements: { sql: string; params: unknown[] }[] = [];
    const logged: Db = { ...db, q: drizzle(db.$client, { schema, logger: { logQuery: (sql, params) => void statements.push({ sql, params }) } }) };
    await filterChoices(logged);
    await listRuns(logged, { limit: 50 });
    await listRuns(logged, { filters: { kind: 'replay' }, limit: 50 });
    expect(statements.length).toBeGreaterThan(5);
    for (const s of statements) {
      const plan = (db.$client.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).all(...(s.params as unknown[])) as { detail: string }[]).map((r) => r.detail).join('\n');
      expect(plan, s.sql).not.toMatch(/SCAN (attempts|node_runs)\b/);
    }
  });
});
