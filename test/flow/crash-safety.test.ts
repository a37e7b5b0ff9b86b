import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { closeDb, markInterrupted, openDb } from '@/db/client';
import { INTERRUPTED_ATTEMPT_ERROR, INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { getRunRecord } from '@/lib/flow/stored-run';
import { copyShowcase } from '../helpers/showcase';
import { until } from '../helpers/until';

describe('crash safety', () => {
  it('a run killed with SIGKILL keeps every finished attempt, passes integrity_check and becomes interrupted once its lease expired', async () => {
    const dir = copyShowcase();
    const dbPath = join(dir, '.aqven', 'aqven.db');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-child.ts', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));

    // a reader of our own (read-only, no migrations) watches the child's progress
    await until('the database', () => (existsSync(dbPath) ? true : undefined));
    const reader = new Database(dbPath, { readonly: true, fileMustExist: true });
    reader.pragma('busy_timeout = 2000');
    const count = (where: string) => {
      try {
        return (reader.prepare(`SELECT count(*) AS n FROM attempts ${where}`).get() as { n: number }).n;
      } catch {
        return 0; // the child may still be creating the tables
      }
    };
    // three finished answers, and the fourth request in flight (the stall)
    await until(`3 finished attempts and a 4th in flight (child stderr: ${stderr})`, () => (count('WHERE outcome IS NOT NULL') === 3 && count('') === 4 ? true : undefined));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    reader.close();

    const raw = new Database(dbPath);
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = raw.prepare(`SELECT seq, outcome, cause, action FROM attempts ORDER BY seq`).all();
    expect(rows).toEqual([
      { seq: 1, outcome: 'ok', cause: 'invalid_output', action: 'repair' },
      { seq: 2, outcome: 'ok', cause: 'invalid_output', action: 'repair' },
      { seq: 3, outcome: 'ok', cause: 'invalid_output', action: 'repair' },
      { seq: 4, outcome: null, cause: null, action: null },
    ]);
    const runId = raw.prepare(`SELECT id, status, heartbeat_at AS heartbeat FROM runs`).get() as { id: string; status: string; heartbeat: number };
    expect(runId.status).toBe('running');
    // the last time the dead process was seen alive: its heartbeat, or a later fact it recorded
    const { latest } = raw
      .prepare(
        `SELECT max(t) AS latest FROM (SELECT started_at AS t FROM node_runs UNION ALL SELECT started_at FROM attempts UNION ALL SELECT finished_at FROM attempts UNION ALL SELECT finished_at FROM transport_tries)`,
      )
      .get() as { latest: number };
    const lastSeen = Math.max(runId.heartbeat, latest);
    raw.close();

    // the dead process's lease has not expired yet: the next start leaves the run alone...
    const db = openDb(dbPath);
    expect((await getRunRecord(db, runId.id))!.status).toBe('running');
    // ...and the first sweep after it expired (the clock injected: three hours later, as when the
    // next command opens the database that afternoon) marks the orphaned run interrupted
    const sweptAt = Date.now() + 3 * 3_600_000;
    expect(await markInterrupted(db, sweptAt)).toBe(1);
    const rec = (await getRunRecord(db, runId.id))!;
    expect(rec.status).toBe('interrupted');
    expect(rec.nodes[0]).toMatchObject({ id: 'draft', status: 'failed', error: INTERRUPTED_NODE_ERROR });
    // the attempt the crash cut off is closed with the reason, and has no outcome
    expect(rec.nodes[0]!.attempts[3]).toMatchObject({ seq: 4, outcome: null, error: INTERRUPTED_ATTEMPT_ERROR });
    // write-ahead: its request had left (the stall), so its try is on record, cut off, and its usage unknown
    expect(rec.nodes[0]!.attempts[3]).toMatchObject({ usageUnknown: true, transport: [expect.objectContaining({ try: 1, status: null, error: 'cut_off' })] });
    // dated when the dead process was last seen alive, not when the sweep found it — never before
    // each one's own start
    expect(new Date(rec.finishedAt!).getTime()).toBe(lastSeen);
    const ends = db.$client
      .prepare(`SELECT 'node' AS what, started_at AS s, finished_at AS f FROM node_runs UNION ALL SELECT 'attempt', started_at, finished_at FROM attempts WHERE seq = 4`)
      .all() as { what: string; s: number; f: number }[];
    expect(ends.map((e) => e.what).sort()).toEqual(['attempt', 'node']);
    for (const e of ends) expect(e.f).toBe(Math.max(lastSeen, e.s));
    expect(rec.nodes[0]!.attempts[3]!.latencyMs).toBeLessThan(60_000);
    expect(rec.nodes[0]!.attempts.filter((a) => a.outcome === 'ok')).toHaveLength(3);
    await closeDb(dbPath);
  });
});
