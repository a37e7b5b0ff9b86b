// `aqven show ID --follow` (DESIGN: CLI; "A run's events"), the command line run in this process:
// a run another command runs is followed to its end and printed as `aqven show` prints it, exit 0;
// a run another process ends failed exits 1; a queued run is said to wait; Ctrl-C stops following
// (130) and leaves the run alone.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { shortRunId } from '@/lib/shared/short-id';
import { otherProcess } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { eventually } from '../queue/workers';
import { runCli } from '@/lib/cli/program';
import { captureIo } from '@/lib/cli/io';
import { aqvenHere as aqven } from './aqven-process';

let dir: string;
let file: string;
let db: Db;
let conn: { close(): Promise<void> };

beforeAll(async () => {
  // the showcase's own latency: the run is still going when it is followed
  dir = copyShowcase({ latency: 'showcase' });
  file = join(dir, '.aqven', 'aqven.db');
  // migrated here, then read and written on a connection of the test's own (each command closes the ones it opened)
  const migrated = await openDatabase(file);
  conn = otherProcess({ db: migrated, target: file, close: () => closeDb(file) });
  db = (conn as ReturnType<typeof otherProcess>).db;
  await closeDb(file);
}, 60_000);
afterAll(async () => {
  await conn.close();
});

/** a run another process runs: alive (its lease an hour away), in `status` */
async function elsewhere(id: string, status: 'queued' | 'running'): Promise<void> {
  const now = Date.now();
  await db.q.insert(db.t.runs).values({
    id,
    project: 'showcase',
    flow: 'triage',
    status,
    input: { ticket: 'elsewhere' },
    startedAt: now,
    owner: 'elsewhere',
    fence: 1,
    leaseExpiresAt: now + 3_600_000,
    heartbeatAt: now,
  });
}
const setStatus = (id: string, status: 'running' | 'failed') =>
  db.q
    .update(db.t.runs)
    .set({ status, ...(status === 'failed' && { finishedAt: Date.now(), errorCode: 'provider_error', errorMessage: 'it broke' }) })
    .where(eq(db.t.runs.id, id));

describe('aqven show --follow', () => {
  it('follows a run another command runs to its end, prints it as aqven show does, and exits 0', async () => {
    const running = aqven(['run', 'triage', '--simulate', '--project', dir, '--input', '{"ticket":"follow me"}']);
    const id = await eventually('the run to start', async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs).limit(1))[0]?.id);
    // through another path to the same folder: its own connection, as another process has (the run closes its own when it ends)
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    const followed = await aqven(['show', shortRunId(id), '--follow', '--project', link]);
    const ran = await running;
    expect(ran.code).toBe(0);
    expect(followed.code).toBe(0);
    expect(followed.out).toBe((await aqven(['show', id, '--project', dir])).out);
    expect(followed.out).toMatch(new RegExp(`^run ${id} .* SUCCEEDED`));
  }, 60_000);

  /** `aqven show ID --follow` in this process, with what it has said so far readable while it runs */
  const follow = (args: string[]) => {
    const io = captureIo({ asProcess: true });
    const done = runCli(['show', ...args, '--follow', '--project', dir], io).then((ended) => ({ code: ended ?? io.code, out: io.stdout, err: io.stderr }));
    return { io, done };
  };

  it('exits 1 when the run ends otherwise; says a queued run waits for a worker', async () => {
    const id = '0198c0de-0000-7000-8000-0000000f0110';
    await elsewhere(id, 'queued');
    const f = follow([id, '--json']);
    await eventually('the queued run to be seen', async () => f.io.stderr.includes('queued'), 20_000, 20);
    await setStatus(id, 'running');
    await setStatus(id, 'failed');
    const followed = await f.done;
    expect(followed.code).toBe(1);
    expect(followed.err).toBe(`run ${shortRunId(id)} is queued: waiting for a worker\n`);
    expect(JSON.parse(followed.out)).toMatchObject({ id, status: 'failed', error: { code: 'provider_error' } });
  }, 30_000);

  it('stops following on Ctrl-C (exit 130) and leaves the run running', async () => {
    const id = '0198c0de-0000-7000-8000-0000000f0111';
    await elsewhere(id, 'running');
    const f = follow([id]);
    let settled = false;
    void f.done.finally(() => (settled = true));
    // until the command listens for it (a signal nobody listens to is dropped by process.emit)
    await eventually('the follow to stop', async () => (process.emit('SIGINT'), settled), 20_000, 100);
    expect(await f.done).toEqual({ code: 130, out: '', err: `aqven show: stopped following; run ${shortRunId(id)} goes on (aqven show ${shortRunId(id)} --follow)\n` });
    expect((await db.q.select({ status: db.t.runs.status }).from(db.t.runs).where(eq(db.t.runs.id, id)))[0]).toEqual({ status: 'running' });
  }, 30_000);
});
