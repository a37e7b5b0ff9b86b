// `aqven db copy --from FILE` on a real PostgreSQL (DESIGN: Storage, "Moving a SQLite history into
// PostgreSQL"): a SQLite history written through drizzle over db/schema.ts arrives row for row — JSON,
// flags, nulls, times and counts past 2^31, non-ASCII text, ids — as read through drizzle on both
// sides; a second copy adds nothing and says so; the identity sequences continue past the copied ids;
// the file is never changed; a file that is no AQVEN database is refused by name.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDatabase, openDb } from '@/db/client';
import { COPY_ORDER, copySqliteHistory } from '@/db/copy';
import * as schema from '@/db/schema';
import { openSqliteReadOnly } from '@/db/status-queries';
import type { Db, PgDb } from '@/db/types';
import { runDbCopy } from '@/lib/cli/db';
import { captureIo } from '@/lib/cli/io';
import { olderMigrationsFolder } from '../helpers/older-schema';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';

const T0 = 1_790_000_000_000; // ms since epoch: far past 2^31
const BIG = 9_007_199_254_740_000; // near 2^53: a wait or a count past any 32-bit column
const TEXT = 'Grüße — 日本語 🚀 «ok» \u00e9\u0301';
const TRIES = 1_100; // more than two INSERT batches of 500

let database: TestDatabase | undefined;
let pgDb: PgDb;
let dir: string;
let sourcePath: string;
const extraDbs: TestDatabase[] = [];
/** the test database as the command opens it: a URL of its own, so the command's closeDb ends its own pool, not the test's */
const cliUrl = () => `${database!.url}?application_name=aqven-db-copy`;

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A SQLite history with every table, written through drizzle over db/schema.ts. */
async function writeHistory(path: string): Promise<void> {
  const db = openDb(path);
  const q = db.q;
  await q.insert(schema.projectSnapshots).values([
    { id: 1, files: { 'aqven.yaml': 'name: "p"\n', 'agents/ä.yaml': TEXT }, hash: 'h1', author: 'cli:zoë', note: 'push', createdAt: T0 },
    { id: 7, files: {}, hash: 'h7', author: null, note: null, createdAt: T0 + 1 },
  ]);
  await q.insert(schema.runs).values([
    {
      id: 'run-ok',
      project: 'p',
      flow: 'triage',
      status: 'succeeded',
      snapshotId: 1,
      queuedAt: T0 - 5,
      input: { ticket: TEXT, nested: { list: [1, 2.5, null, true], empty: {} } },
      output: { queue: 'billing', confidence: 0.93 },
      turns: 2,
      inputTokens: 3_000_000_000,
      outputTokens: 12,
      costUsd: 0.000123456789,
      pid: 4242,
      owner: null,
      fence: 3,
      heartbeatAt: T0 + 10,
      leaseExpiresAt: T0 + 20_010,
      startedAt: T0,
      finishedAt: T0 + 999,
    },
    {
      id: 'run-failed',
      project: 'p',
      flow: 'triage',
      status: 'failed',
      input: ['a', TEXT],
      output: null,
      errorCode: 'refusal',
      errorNode: 'classify',
      errorMessage: `refused: ${TEXT}`,
      errorHint: 'Set output.on_refusal',
      startedAt: T0 + 1,
      finishedAt: T0 + 2,
    },
    // a run still running in the source: copied as it is
    { id: 'run-live', project: 'p', flow: 'triage', status: 'running', input: {}, owner: 'owner-1', fence: 1, heartbeatAt: T0 + 3, leaseExpiresAt: T0 + 20_003, startedAt: T0 + 3 },
    { id: 'run-queued', project: 'p', flow: 'triage', status: 'queued', input: null, snapshotId: 7, queuedAt: T0 + 4, startedAt: T0 + 4 },
  ]);
  await q.insert(schema.nodeRuns).values([
    {
      id: 'n-ok',
      runId: 'run-ok',
      nodeId: 'classify',
      agent: 'classifier',
      turn: 1,
      ord: 0,
      status: 'succeeded',
      output: { queue: 'billing' },
      policy: { chain: ['openrouter:a', 'openrouter:b'], retries: 1, on_error: 'fallback' },
      inputTokens: 3_000_000_000,
      outputTokens: 12,
      costUsd: 0.5,
      startedAt: T0,
      finishedAt: T0 + 500,
    },
    { id: 'n-text', runId: 'run-ok', nodeId: 'reply', agent: 'writer', turn: 1, ord: 1, status: 'succeeded', output: TEXT, startedAt: T0 + 500, finishedAt: T0 + 999 },
    {
      id: 'n-failed',
      runId: 'run-failed',
      nodeId: 'classify',
      agent: 'classifier',
      turn: 1,
      status: 'failed',
      output: null,
      errorCode: 'refusal',
      errorMessage: TEXT,
      hint: 'hint',
      policy: null,
      startedAt: T0 + 1,
      finishedAt: T0 + 2,
    },
    { id: 'n-live', runId: 'run-live', nodeId: 'classify', agent: 'classifier', turn: 1, status: 'running', startedAt: T0 + 3 },
    { id: 'n-pending', runId: 'run-live', nodeId: 'reply', agent: 'writer', turn: 1, ord: 1, status: 'pending' },
  ]);
  await q.insert(schema.attempts).values([
    {
      id: 'a-ok',
      nodeRunId: 'n-ok',
      runId: 'run-ok',
      seq: 1,
      model: 'openrouter:a',
      chainIndex: 0,
      answerNo: 1,
      outcome: 'ok',
      finishReason: 'stop',
      nativeFinishReason: 'STOP',
      finishNote: null,
      cause: null,
      action: 'none',
      request: [
        { role: 'system', content: 'Sort it' },
        { role: 'user', content: TEXT },
      ],
      responseText: '{"queue":"billing"}',
      validationErrors: [],
      discarded: false,
      streamedText: TEXT,
      inputTokens: 3_000_000_000,
      outputTokens: 12,
      costUsd: 0.25,
      usageUnknown: false,
      startedAt: T0,
      finishedAt: T0 + 400,
    },
    {
      id: 'a-bad',
      nodeRunId: 'n-failed',
      runId: 'run-failed',
      seq: 1,
      model: 'openrouter:b',
      chainIndex: 1,
      answerNo: 2,
      outcome: 'refusal',
      finishReason: 'content_filter',
      finishNote: 'unrecognised finish reason `eos`',
      cause: 'refusal',
      action: 'fallback',
      request: { messages: [] },
      errorKind: 'refusal',
      errorMessage: TEXT,
      errorDetail: '<EMAIL> said no',
      validationErrors: [{ path: '/queue', message: 'must be one of' }],
      discarded: true,
      streamedText: null,
      usageUnknown: true,
      startedAt: T0 + 1,
      finishedAt: T0 + 2,
    },
    // in flight: no outcome, no end, its streamed text still in chunks
    { id: 'a-live', nodeRunId: 'n-live', runId: 'run-live', seq: 1, model: 'openrouter:a', chainIndex: 0, answerNo: 1, outcome: null, request: null, startedAt: T0 + 3 },
  ]);
  await q.insert(schema.transportTries).values([
    { id: 1, attemptId: 'a-ok', tryNo: 1, status: 429, error: 'rate_limited', retryAfterMs: BIG, waitedMs: 2_500_000_000, discardedText: TEXT, startedAt: T0, finishedAt: T0 + 1 },
    { id: 2, attemptId: 'a-ok', tryNo: 2, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: T0 + 2, finishedAt: T0 + 400 },
  ]);
  // a long history of tries: ids with a gap, 5000 past the others
  const many = Array.from({ length: TRIES }, (_, i) => ({
    id: 5000 + i,
    attemptId: 'a-bad',
    tryNo: i + 1,
    status: i % 2 ? 503 : null,
    error: i % 2 ? 'server_error' : 'timeout',
    waitedMs: i * 1000,
    startedAt: T0 + i,
    finishedAt: T0 + i + 1,
  }));
  for (let i = 0; i < many.length; i += 200) await q.insert(schema.transportTries).values(many.slice(i, i + 200));
  await q.insert(schema.streamChunks).values([
    { attemptId: 'a-live', seq: 1, text: 'Grüße ' },
    { attemptId: 'a-live', seq: 2, text: '🚀' },
  ]);
  await q.insert(schema.rateLimitPauses).values([
    {
      model: 'openrouter:a',
      pausedUntil: T0 + 60_000,
      reason: 'retry-after',
      setAt: T0,
      serverWait: 'Fri, 31 Dec 9999 23:59:59 GMT',
      askedMs: BIG,
      maxWaitMs: 3_600_000,
      probeOwner: 'owner-1',
      probeUntil: T0 + 61_000,
    },
    { model: 'gemini:ß', pausedUntil: T0, reason: 'backoff' }, // a pause from before its origin was kept: nulls
  ]);
  await q.insert(schema.policyRevisions).values([
    { id: 1, agent: 'classifier', revision: 1, yaml: `model: a\n# ${TEXT}\n`, diff: '', author: null, snapshotId: null, createdAt: T0 },
    { id: 2, agent: 'classifier', revision: 2, yaml: 'model: b\n', diff: '-model: a\n+model: b\n', author: 'cli:zoë', snapshotId: 7, createdAt: T0 + 1 },
  ]);
  await q.insert(schema.workers).values([
    { id: 'w-1', host: 'höst', pid: 31337, concurrency: 4, running: 2, startedAt: T0, seenAt: T0 + 5, stoppedAt: null },
    { id: 'w-0', host: 'old', pid: 1, concurrency: 1, running: 0, startedAt: T0 - 10, seenAt: T0 - 5, stoppedAt: T0 - 1 },
  ]);
  await q.insert(schema.notes).values([
    { id: 1, runId: 'run-ok', nodeRunId: 'n-ok', attemptId: 'a-ok', author: 'zoë', body: `**seen** ${TEXT}`, createdAt: T0, updatedAt: T0 + 1 },
    { id: 4, runId: 'run-ok', author: 'ana', body: 'on the run', createdAt: T0 + 2, updatedAt: T0 + 2 },
  ]);
  await q.insert(schema.searchDocs).values([{ id: 3, runId: 'run-ok', field: 'input', body: TEXT, at: T0 }]);
  await q.insert(schema.agentDaily).values([
    {
      agent: 'classifier',
      day: 1_700_006_400_000,
      model: 'openrouter:a',
      outcome: 'ok',
      cause: '',
      action: 'none',
      attempts: 3,
      inputTokens: 3_000_000_000,
      outputTokens: 12,
      costUsd: 0.25,
      durationMs: 400,
    },
  ]);
  await q.insert(schema.nodeDaily).values([{ agent: 'classifier', day: 1_700_006_400_000, status: 'succeeded', nodes: 2, lastStartedAt: T0 }]);
  await q.insert(schema.failureDaily).values([
    {
      sig: '0123456789abcdef',
      day: 1_700_006_400_000,
      level: 'attempt',
      agent: 'classifier',
      model: 'openrouter:a',
      code: 'invalid_output',
      message: 'does not match "…"',
      failures: 2,
      costUsd: 0.5,
      firstAt: T0,
      lastAt: T0 + 9,
    },
  ]);
  await q.insert(schema.modelLimits).values([
    {
      id: 4,
      model: 'openrouter:a',
      dimension: 'depth',
      settingsKey: 'k1',
      settings: { trials: 5, threshold: 0.9, strict: false },
      measuredOn: '2023-11-15',
      status: 'partial',
      lastHeld: 4,
      firstFailed: null,
      levels: [{ level: 4, trials: 5, firstTryValid: 5, afterRepairValid: 5, truncated: 0, calls: 5 }],
      calls: 5,
      inputTokens: 3_000_000_000,
      outputTokens: 7,
      costUsd: 0.125,
      runId: 'run-ok',
      startedAt: T0,
      updatedAt: T0 + 1,
    },
  ]);
  const progress = {
    total: 1,
    concurrency: 2,
    capUsd: 0.5,
    spentUsd: 0.01,
    counts: { waiting: 0, running: 0, succeeded: 1, failed: 0, refused: 0, not_started: 0 },
    peakRunning: 1,
    done: true,
    stopped: null,
    items: [{ runId: 'run-ok', nodeId: 'classify', state: 'succeeded', replayRunId: 'run-ok', reason: null, estimateUsd: 0.01, costUsd: 0.01 }],
  };
  await q.insert(schema.replayBatches).values([
    {
      id: 'batch-1',
      label: '0123456789abcdef',
      startedBy: 'zoë',
      startedAt: T0,
      updatedAt: T0 + 5,
      finishedAt: T0 + 5,
      owner: 'p1',
      total: 1,
      succeeded: 1,
      spentUsd: 0.01,
      capUsd: 0.5,
      stopped: null,
      progress,
    },
  ]);
  await closeDb(path); // checkpointed: the file alone holds the history
}

/** A row's key, to list both sides in the same order. */
const keyOf = (row: Record<string, unknown>) => String(row.id ?? row.model ?? row.agent ?? row.sig ?? `${String(row.attemptId)}#${String(row.seq).padStart(6, '0')}`);
const sorted = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));

/** Every table of `db`, read through drizzle. */
async function everyTable(db: Db): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const key of COPY_ORDER) out[key] = sorted((await db.q.select().from(db.t[key] as typeof db.t.runs)) as Record<string, unknown>[]);
  return out;
}

/**
 * Every table but what the copy adds on its own: the source's failed rows carry no failure
 * signature (written before signatures existed), the copy stamps them and sums them into
 * failure_daily. Those are compared apart.
 */
async function everyTableButStamps(db: Db): Promise<Record<string, Record<string, unknown>[]>> {
  const all = await everyTable(db);
  const unstamped = (rows: Record<string, unknown>[] | undefined) => (rows ?? []).map(({ failureSig: _sig, ...rest }) => rest);
  return { ...all, attempts: unstamped(all.attempts), nodeRuns: unstamped(all.nodeRuns), failureDaily: [] };
}

beforeAll(async () => {
  database = await testDatabase({ migrated: true });
  pgDb = (await openDatabase(database.url)) as PgDb;
  dir = mkdtempSync(join(tmpdir(), 'aqven-copy-test-'));
  sourcePath = join(dir, 'history.db');
  await writeHistory(sourcePath);
}, 90_000);

afterAll(async () => {
  if (database) await closeDb(database.url);
  for (const extra of extraDbs) {
    await closeDb(extra.url);
    await extra.stop();
  }
  await database?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('aqven db copy', () => {
  it('copies every table row for row, as read through drizzle on both sides, leaving the file unchanged', async () => {
    const before = sha(sourcePath);
    const filesBefore = readdirSync(dir).sort();
    const progress: string[] = [];
    const result = await copySqliteHistory(sourcePath, pgDb, { onProgress: (p) => progress.push(`${p.table} ${p.done}/${p.total}`) });

    expect(result.map((t) => [t.table, t.total, t.copied, t.existing])).toEqual([
      ['runs', 4, 4, 0],
      ['node_runs', 5, 5, 0],
      ['attempts', 3, 3, 0],
      ['transport_tries', TRIES + 2, TRIES + 2, 0],
      ['stream_chunks', 2, 2, 0],
      ['rate_limit_pauses', 2, 2, 0],
      ['policy_revisions', 2, 2, 0],
      ['project_snapshots', 2, 2, 0],
      ['workers', 2, 2, 0],
      ['notes', 2, 2, 0],
      ['search_docs', 1, 1, 0],
      ['agent_daily', 1, 1, 0],
      ['node_daily', 1, 1, 0],
      ['failure_daily', 1, 1, 0],
      ['model_limits', 1, 1, 0],
      ['replay_batches', 1, 1, 0],
    ]);
    // batches of 500 rows
    expect(progress.filter((p) => p.startsWith('transport_tries'))).toEqual([
      'transport_tries 0/1102',
      'transport_tries 500/1102',
      'transport_tries 1000/1102',
      'transport_tries 1102/1102',
    ]);

    const src = openSqliteReadOnly(sourcePath);
    try {
      const [fromSqlite, fromPg] = [await everyTableButStamps(src), await everyTableButStamps(pgDb)];
      for (const key of COPY_ORDER) expect([key, fromPg[key]]).toEqual([key, fromSqlite[key]]);
      // the failed attempt the source never stamped has its signature now, and is summed beside the copied sums
      const bad = (await pgDb.q.select().from(pgDb.t.attempts)).find((a) => a.id === 'a-bad')!;
      expect((await src.q.select().from(src.t.attempts)).find((a) => a.id === 'a-bad')!.failureSig).toBeNull();
      expect(bad.failureSig).toMatch(/^[0-9a-f]{16}$/);
      const sums = await pgDb.q.select().from(pgDb.t.failureDaily);
      expect(sums.find((r) => r.sig === bad.failureSig)).toMatchObject({ failures: 1, level: 'attempt' });
      // and so is the failed node
      const failedNode = (await pgDb.q.select().from(pgDb.t.nodeRuns)).find((n) => n.id === 'n-failed')!;
      expect(failedNode.failureSig).toMatch(/^[0-9a-f]{16}$/);
      expect(sums.find((r) => r.sig === failedNode.failureSig)).toMatchObject({ failures: 1, level: 'node' });
      expect(sums).toHaveLength((await src.q.select().from(src.t.failureDaily)).length + 2);
      // the values the app reads, spot-checked: types survived, not only equality
      const run = fromPg.runs!.find((r) => r.id === 'run-ok')!;
      expect(run.inputTokens).toBe(3_000_000_000);
      expect(run.input).toEqual({ ticket: TEXT, nested: { list: [1, 2.5, null, true], empty: {} } });
      expect(fromPg.runs!.find((r) => r.id === 'run-live')).toMatchObject({ status: 'running', owner: 'owner-1', finishedAt: null });
      expect(fromPg.attempts!.find((a) => a.id === 'a-bad')).toMatchObject({ discarded: true, usageUnknown: true, errorMessage: TEXT });
      expect(fromPg.transportTries!.find((t) => t.id === 1)).toMatchObject({ retryAfterMs: BIG, waitedMs: 2_500_000_000, discardedText: TEXT });
    } finally {
      src.$client.close();
    }
    expect(sha(sourcePath)).toBe(before);
    // read-only, SQLite may only add its empty -wal and its -shm index beside a file in WAL mode
    const added = readdirSync(dir).filter((f) => !filesBefore.includes(f));
    expect(added.every((f) => f === 'history.db-wal' || f === 'history.db-shm')).toBe(true);
    if (added.includes('history.db-wal')) expect(statSync(`${sourcePath}-wal`).size).toBe(0);
  });

  it('copies nothing twice: the command says how many rows were new and how many already there', async () => {
    const io = captureIo();
    expect(await runDbCopy({ from: sourcePath, env: { AQVEN_DATABASE_URL: cliUrl() } }, io)).toBe(0);
    const lines = io.stdout.trim().split('\n');
    expect(lines).toHaveLength(COPY_ORDER.length + 1);
    expect(lines[0]).toMatch(/^runs\s+0 rows copied, 4 already there$/);
    expect(lines[3]).toMatch(/^transport_tries\s+0 rows copied, 1,102 already there$/);
    expect(lines.at(-1)).toBe(`copied 0 rows from ${sourcePath} into ${cliUrl()}; 1,132 already there`);
    const [{ n }] = (await pgDb.pool.query<{ n: string }>('SELECT count(*) AS n FROM transport_tries')).rows as [{ n: string }];
    expect(Number(n)).toBe(TRIES + 2);
  });

  it('a new row without an id gets one past every copied id', async () => {
    const { transportTries, policyRevisions, projectSnapshots } = pgDb.t;
    const [tryRow] = await pgDb.q.insert(transportTries).values({ attemptId: 'a-ok', tryNo: 3, startedAt: T0, finishedAt: T0 }).returning({ id: transportTries.id });
    expect(tryRow!.id).toBe(5000 + TRIES);
    const [rev] = await pgDb.q.insert(policyRevisions).values({ agent: 'x', revision: 1, yaml: '', diff: '', createdAt: T0 }).returning({ id: policyRevisions.id });
    expect(rev!.id).toBe(3);
    const [snap] = await pgDb.q.insert(projectSnapshots).values({ files: {}, hash: 'h', createdAt: T0 }).returning({ id: projectSnapshots.id });
    expect(snap!.id).toBe(8);
    // copying again never moves a sequence backwards
    await copySqliteHistory(sourcePath, pgDb);
    const [next] = await pgDb.q.insert(transportTries).values({ attemptId: 'a-ok', tryNo: 4, startedAt: T0, finishedAt: T0 }).returning({ id: transportTries.id });
    expect(next!.id).toBe(5000 + TRIES + 1);
  });

  it('prints a line per table into a fresh database, small batches included', async () => {
    const extra = await testDatabase();
    extraDbs.push(extra);
    const url = extra.url;
    const io = captureIo();
    const progress: string[] = [];
    expect(await runDbCopy({ from: sourcePath, env: { AQVEN_DATABASE_URL: url }, batchRows: 3, progress: (t) => progress.push(t) }, io)).toBe(0);
    expect(io.stdout).toMatch(/^runs\s+4 rows copied, 0 already there$/m);
    expect(io.stdout).toMatch(/^workers\s+2 rows copied, 0 already there$/m);
    expect(io.stdout.trim().split('\n').at(-1)).toMatch(/^copied 1,132 rows from .*history\.db into postgres:\/\/.*; 0 already there$/);
    expect(progress).toContain('\r\x1b[Kcopying attempts 3/3');
    expect(progress.at(-1)).toBe('\r\x1b[K'); // the progress line is cleared at the end
    const fresh = (await openDatabase(url)) as PgDb;
    const src = openSqliteReadOnly(sourcePath);
    try {
      expect(await everyTableButStamps(fresh)).toEqual(await everyTableButStamps(src));
    } finally {
      src.$client.close();
    }
  }, 60_000); // a whole copy into PostgreSQL: a few seconds quiet, over 20 s on a busy machine

  it('reads a history at an older schema from a migrated temporary copy; the file stays as it was', async () => {
    // a database last migrated by an aqven one migration older
    const { folder: oldFolder, latest } = olderMigrationsFolder('sqlite');
    const oldPath = join(dir, 'old.db');
    const conn = new Database(oldPath);
    migrate(drizzle(conn), { migrationsFolder: oldFolder });
    conn.prepare(`INSERT INTO runs (id, project, flow, status, input, started_at) VALUES ('run-old', 'p', 'f', 'succeeded', '{"a":1}', ${T0})`).run();
    conn.close();
    const before = sha(oldPath);

    // into a database of its own: the main one holds another history, which a copy refuses
    const extra = await testDatabase();
    extraDbs.push(extra);
    const io = captureIo();
    expect(await runDbCopy({ from: oldPath, env: { AQVEN_DATABASE_URL: extra.url } }, io)).toBe(0);
    expect(io.stderr).toContain(`old.db is at migration ${latest}, 1 behind: read from a migrated temporary copy (the file is not changed)`);
    expect(io.stdout).toMatch(/^runs\s+1 row copied, 0 already there$/m);
    const target = (await openDatabase(extra.url)) as PgDb;
    const [row] = await target.q.select().from(target.t.runs).where(eq(target.t.runs.id, 'run-old'));
    expect(row).toMatchObject({ id: 'run-old', input: { a: 1 }, snapshotId: null, queuedAt: null, startedAt: T0 });
    expect(sha(oldPath)).toBe(before);
  });

  it('refuses a file that is not an AQVEN database, by name, and a target that is not PostgreSQL', async () => {
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'hello, this is not a database at all, just words that fill more than a header of a page\n'.repeat(20));
    const other = join(dir, 'other.db');
    const c = new Database(other);
    c.exec('CREATE TABLE things (id integer)');
    c.close();
    const env = { AQVEN_DATABASE_URL: cliUrl() };

    for (const [from, message] of [
      [text, `aqven db copy: ${text} is not an AQVEN database (SQLITE_NOTADB)\n`],
      [other, `aqven db copy: ${other} is not an AQVEN database (no runs and migrations tables)\n`],
      [join(dir, 'missing.db'), `aqven db copy: ${join(dir, 'missing.db')}: no such file\n`],
    ] as const) {
      const io = captureIo();
      expect(await runDbCopy({ from, env }, io)).toBe(2);
      expect(io.stderr).toBe(message);
      expect(io.stdout).toBe('');
    }

    const unset = captureIo();
    expect(await runDbCopy({ from: sourcePath, env: {} }, unset)).toBe(2);
    expect(unset.stderr).toMatch(/^aqven db copy: set AQVEN_DATABASE_URL to the PostgreSQL database to copy into/);
    const file = captureIo();
    expect(await runDbCopy({ from: sourcePath, env: { AQVEN_DATABASE_URL: join(dir, 'x.db') } }, file)).toBe(2);
    expect(file.stderr).toMatch(/AQVEN_DATABASE_URL must be a postgres:\/\/ URL to copy into/);
    const down = captureIo();
    expect(await runDbCopy({ from: sourcePath, env: { AQVEN_DATABASE_URL: 'postgres://aqven:secret@127.0.0.1:1/none' } }, down)).toBe(3);
    expect(down.stderr).toMatch(/^aqven db copy: cannot connect to the PostgreSQL database postgres:\/\/aqven:\*\*\*@127\.0\.0\.1:1\/none: .*ECONNREFUSED/);
    expect(down.stderr).not.toContain('secret');
  });

  it('a row PostgreSQL cannot store (a NUL in text) stops the copy with exit 1, naming the row', async () => {
    const nulPath = join(dir, 'nul.db');
    const db = openDb(nulPath);
    await db.q.insert(schema.runs).values({ id: 'run-nul', project: 'p', flow: 'f', status: 'failed', errorMessage: 'a\u0000b', startedAt: T0 });
    await closeDb(nulPath);
    const extra = await testDatabase();
    extraDbs.push(extra);
    const io = captureIo();
    expect(await runDbCopy({ from: nulPath, env: { AQVEN_DATABASE_URL: extra.url } }, io)).toBe(1);
    expect(io.stderr).toBe('aqven db copy: runs run-nul: error_message holds a NUL character, which PostgreSQL text cannot store; nothing of its batch was copied\n');
  });

  it('refuses, before writing anything, a target that holds runs the file does not: their numbered rows and daily sums would be dropped', async () => {
    // another history: one run, with a transport try whose id 1 the main history's tries use too
    const otherPath = join(dir, 'other.db');
    const other = openDb(otherPath);
    await other.q.insert(schema.runs).values({ id: 'run-other', project: 'p', flow: 'f', status: 'succeeded', startedAt: T0 });
    await closeDb(otherPath);
    const before = await pgDb.q.select().from(pgDb.t.runs);
    const io = captureIo();
    expect(await runDbCopy({ from: otherPath, env: { AQVEN_DATABASE_URL: cliUrl() } }, io)).toBe(2);
    expect(io.stderr).toMatch(
      /^aqven db copy: postgres:\/\/\S+ already holds 4 runs that \S+other\.db does not \(e\.g\. run-\S+\): copying into it would drop rows of the file whose numbered ids and daily sums meet that history's; copy into a fresh database/,
    );
    expect(await pgDb.q.select().from(pgDb.t.runs)).toEqual(before);
  });
});
