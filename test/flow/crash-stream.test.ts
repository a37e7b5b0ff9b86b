// A crash mid-stream (DESIGN: Streaming, Storage): nothing raw was written while the stream ran,
// and the recovery that closes the cut-off attempt marks its text discarded — joined from its
// batches, redacted and capped — so neither the files nor the run history keep the raw text.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { closeDb, markInterrupted, openDb } from '@/db/client';
import { INTERRUPTED_ATTEMPT_ERROR } from '@/db/interrupted-error';
import { LEASE_TTL_MS } from '@/db/run-lease';
import { getRunFacts } from '@/db/queries';
import { copyShowcase } from '../helpers/showcase';
import { until } from '../helpers/until';
import { rawValuesOnDisk } from '../helpers/raw-on-disk';

const RAW = ['anna@example.com', '4111 1111 1111 1111', '192.168.77.12'];
const TEXT = Array.from({ length: 40 }, (_, i) => `Line ${i}: mail ${RAW[0]}, card ${RAW[1]}, host ${RAW[2]}. `).join('');

describe('crash mid-stream', () => {
  it('a run killed while streaming leaves no raw text on disk; recovery marks the cut-off text discarded, redacted', async () => {
    const dir = copyShowcase();
    const dbDir = join(dir, '.aqven');
    const dbPath = join(dbDir, 'aqven.db');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-stream-child.ts', dir, TEXT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));

    await until('the database', () => (existsSync(dbPath) ? true : undefined));
    const reader = new Database(dbPath, { readonly: true, fileMustExist: true });
    reader.pragma('busy_timeout = 2000');
    const batches = () => {
      try {
        const r = reader.prepare(`SELECT count(*) AS n, group_concat(text, '') AS t FROM stream_chunks`).get() as { n: number; t: string | null };
        return r.n >= 2 && r.t!.includes('<CARD>') ? r.t! : undefined;
      } catch {
        return undefined; // the child may still be creating the tables
      }
    };
    const written = await until(`batches of the stream (child stderr: ${stderr})`, batches);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    reader.close();
    expect(written).toContain('mail <EMAIL>, card <CARD>, host <IP>.');

    // what the dead process left: the WAL and the file, with no raw value in them
    expect(existsSync(join(dbDir, 'aqven.db-wal'))).toBe(true);
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);

    // the next start, once the dead process's lease has expired, closes the cut-off attempt
    const db = openDb(dbPath);
    await markInterrupted(db, Date.now() + LEASE_TTL_MS + 1);
    const runId = (db.$client.prepare(`SELECT id FROM runs`).get() as { id: string }).id;
    const draft = (await getRunFacts(db, runId))!.nodes.find((n) => n.id === 'draft')!;
    const [cut] = draft.attempts;
    expect(cut).toMatchObject({ outcome: null, discarded: true, error: INTERRUPTED_ATTEMPT_ERROR });
    expect(cut!.streamedText!.startsWith(written)).toBe(true);
    for (const v of RAW) expect(cut!.streamedText).not.toContain(v);
    expect(db.$client.prepare(`SELECT count(*) AS n FROM stream_chunks`).get()).toEqual({ n: 0 });
    await closeDb(dbPath);
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);
  });
});
