// Retention on both dialects: a purge deletes the runs started before the cutoff with every row
// under them (no orphan left, the full-text index too), keeps live and newer runs, trims the daily
// sums of the days wholly before the cutoff, and a dry run counts the same rows and deletes none.
import { count, eq, isNull, sql } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { seedRuns, type SeedRun } from '../test/helpers/seed-history';
import { lastWholeDayBefore, purgeRuns } from './purge';
import type { Db } from './types';
import { indexPendingSearchDocs } from './search-index';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12);
const CUTOFF = NOW - 90 * DAY;

const run = (id: string, startedAt: number, over: Partial<SeedRun> = {}): SeedRun => ({
  id,
  status: 'succeeded',
  startedAt,
  nodes: [
    {
      nodeId: 'classify',
      agent: 'classifier',
      status: 'failed',
      startedAt,
      error: { code: 'refusal', message: 'refused' },
      attempts: [
        { cause: 'refusal', message: 'no', costUsd: 0.001, startedAt },
        { cause: 'refusal', message: 'no', costUsd: 0.001, startedAt: startedAt + 5 },
      ],
    },
    { nodeId: 'manual_review', agent: 'writer', status: 'succeeded', startedAt: startedAt + 10, attempts: [{ startedAt: startedAt + 10 }] },
  ],
  ...over,
});

/** the facts a run's rows stand for beyond nodes and attempts: a transport try and a chunk per attempt, a note, search entries */
async function decorate(db: Db, runId: string, word: string) {
  const { attempts, notes, searchDocs, streamChunks, transportTries } = db.t;
  const atts = await db.q.select({ id: attempts.id, nodeRunId: attempts.nodeRunId, at: attempts.startedAt }).from(attempts).where(eq(attempts.runId, runId));
  for (const a of atts) {
    await db.q.insert(transportTries).values({ attemptId: a.id, tryNo: 1, status: 200, startedAt: a.at, finishedAt: a.at + 1 });
    await db.q.insert(streamChunks).values({ attemptId: a.id, seq: 0, text: 'partial' });
  }
  const a = atts[0]!;
  await db.q.insert(notes).values([
    { runId, author: 'ana', body: 'on the run', createdAt: a.at, updatedAt: a.at },
    { runId, nodeRunId: a.nodeRunId, attemptId: a.id, author: 'ana', body: 'on an attempt', createdAt: a.at, updatedAt: a.at },
  ]);
  await db.q.insert(searchDocs).values([
    { runId, field: 'input', body: `ticket about ${word}`, at: a.at },
    { runId, nodeRunId: a.nodeRunId, attemptId: a.id, field: 'error', body: 'no', at: a.at },
  ]);
}

async function rows(db: Db) {
  const t = db.t;
  const n = async (table: SQLiteTable) => Number((await db.q.select({ n: count() }).from(table))[0]!.n);
  return {
    runs: await n(t.runs),
    nodeRuns: await n(t.nodeRuns),
    attempts: await n(t.attempts),
    transportTries: await n(t.transportTries),
    streamChunks: await n(t.streamChunks),
    notes: await n(t.notes),
    searchDocs: await n(t.searchDocs),
    agentDaily: await n(t.agentDaily),
    nodeDaily: await n(t.nodeDaily),
    failureDaily: await n(t.failureDaily),
  };
}

/** rows whose parent is gone (the cascade would have failed) */
async function orphans(db: Db): Promise<number> {
  const q = (text: string) => db.q.select({ n: sql<number>`(${sql.raw(text)})`.mapWith(Number) }).from(sql`(values (0)) as one`);
  const checks = [
    'select count(*) from node_runs n where not exists (select 1 from runs r where r.id = n.run_id)',
    'select count(*) from attempts a where not exists (select 1 from node_runs n where n.id = a.node_run_id)',
    'select count(*) from attempts a where not exists (select 1 from runs r where r.id = a.run_id)',
    'select count(*) from transport_tries t where not exists (select 1 from attempts a where a.id = t.attempt_id)',
    'select count(*) from stream_chunks c where not exists (select 1 from attempts a where a.id = c.attempt_id)',
    'select count(*) from notes o where not exists (select 1 from runs r where r.id = o.run_id)',
    'select count(*) from search_docs d where not exists (select 1 from runs r where r.id = d.run_id)',
  ];
  let total = 0;
  for (const c of checks) total += (await q(c))[0]!.n;
  return total;
}

describe('lastWholeDayBefore', () => {
  it('is the day before the cutoff’s own day: a day is trimmed only when all of it is older', () => {
    const d = Date.UTC(2026, 2, 1);
    expect(lastWholeDayBefore(d + 5)).toBe(d - DAY);
    expect(lastWholeDayBefore(d)).toBe(d - DAY);
  });
});

describe.each(DIALECTS)('purge on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));

  it('counts what it would delete on a dry run, and deletes nothing', async () => {
    await seedRuns(db, [
      run('old-1', CUTOFF - 30 * DAY),
      run('old-2', CUTOFF - 2 * DAY),
      // the cutoff's own day, before the cutoff: the run goes, its day's sums stay
      run('old-3', CUTOFF - 1000),
      run('new-1', CUTOFF + 1000),
      run('new-2', NOW - DAY),
      // started long ago and still running (its process may yet finish it): kept
      run('old-live', CUTOFF - 10 * DAY, { status: 'running' }),
      // a replay of an old run: it stays, and forgets its original
      run('replay-new', NOW - 2 * DAY, { kind: 'replay', replayOf: 'old-2' }),
    ]);
    for (const id of ['old-1', 'old-2', 'old-3', 'new-1', 'old-live']) {
      await decorate(db, id, id === 'old-1' ? 'zanzibar' : 'lisbon');
      // SQLite indexes search docs in batches: the first two runs' are in the full-text index before
      // the purge, the others still wait for their batch
      if (id === 'old-2' && db.dialect === 'sqlite') expect(indexPendingSearchDocs(db)).toBeGreaterThan(0);
    }
    const was = await rows(db);
    const dry = await purgeRuns(db, { cutoff: CUTOFF, dryRun: true, batch: 2 });
    expect(dry.dryRun).toBe(true);
    expect(dry.deleted).toEqual({
      runs: 3,
      nodeRuns: 6,
      attempts: 9,
      transportTries: 9,
      streamChunks: 9,
      notes: 6,
      searchDocs: 6,
      // the three days wholly before the cutoff (old-1's, old-live's, old-2's), two rows each: two
      // agents' attempts, their two node statuses, two failure signatures
      agentDaily: 6,
      nodeDaily: 6,
      failureDaily: 6,
      replayBatches: 0,
      auditEvents: 0,
      idempotencyKeys: 0,
    });
    expect(dry.keptLive).toBe(1);
    expect(await rows(db)).toEqual(was);
  });

  it('deletes the old runs in batches with every row under them, trims the sums, and leaves no orphan', async () => {
    const was = await rows(db);
    const batches: number[] = [];
    const res = await purgeRuns(db, { cutoff: CUTOFF, batch: 2, between: (soFar) => void batches.push(soFar.runs) });
    expect(batches).toEqual([2, 3]);
    expect(res.deleted).toEqual({
      runs: 3,
      nodeRuns: 6,
      attempts: 9,
      transportTries: 9,
      streamChunks: 9,
      notes: 6,
      searchDocs: 6,
      agentDaily: 6,
      nodeDaily: 6,
      failureDaily: 6,
      replayBatches: 0,
      auditEvents: 0,
      idempotencyKeys: 0,
    });
    const now = await rows(db);
    for (const k of Object.keys(now) as (keyof typeof now)[]) expect(now[k], k).toBe(was[k] - res.deleted[k]);
    expect(await orphans(db)).toBe(0);
    const { runs, agentDaily } = db.t;
    expect((await db.q.select({ id: runs.id }).from(runs).orderBy(runs.id)).map((r) => r.id)).toEqual(['new-1', 'new-2', 'old-live', 'replay-new']);
    expect(await db.q.select({ id: runs.id }).from(runs).where(isNull(runs.replayOf))).toHaveLength(4);
    // the cutoff's own day keeps its sums (old-3 was counted there with new-1)
    const days = (await db.q.selectDistinct({ day: agentDaily.day }).from(agentDaily)).map((r) => Number(r.day));
    expect(Math.min(...days)).toBe(Math.floor(CUTOFF / DAY) * DAY);
    expect(res.before.bytes).toBeGreaterThan(0);
    // SQLite without auto_vacuum: freed pages stay in the file (reused; VACUUM shrinks it) and are counted
    expect(res.autoVacuum).toBe(dialect === 'sqlite' ? 'none' : null);
    expect(res.after.freeBytes === null).toBe(dialect === 'pg');
  });

  it.runIf(dialect === 'sqlite')('takes the deleted runs out of the full-text index', async () => {
    const sqlite = db;
    if (sqlite.dialect !== 'sqlite') return;
    const match = (word: string) => sqlite.$client.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH ?').all(word);
    // indexed rows went out with their runs, rows never indexed were not "deleted" from the index
    expect(match('zanzibar')).toHaveLength(0);
    indexPendingSearchDocs(sqlite);
    expect(match('lisbon')).toHaveLength(2); // new-1's and old-live's inputs
    expect(match('zanzibar')).toHaveLength(0);
    // an FTS5 'delete' of a row the index never held would corrupt it: the index still matches its table
    expect(() => sqlite.$client.exec("INSERT INTO search_fts(search_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
  });

  it('finds nothing more to delete at the same cutoff', async () => {
    const again = await purgeRuns(db, { cutoff: CUTOFF });
    expect(again.deleted).toEqual({
      runs: 0,
      nodeRuns: 0,
      attempts: 0,
      transportTries: 0,
      streamChunks: 0,
      notes: 0,
      searchDocs: 0,
      agentDaily: 0,
      nodeDaily: 0,
      failureDaily: 0,
      replayBatches: 0,
      auditEvents: 0,
      idempotencyKeys: 0,
    });
  });
});
