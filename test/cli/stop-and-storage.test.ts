// `aqven run` stopped by a signal, and `aqven run` on a database it cannot write (DESIGN: Limits), as a
// user meets them: the real bin, a real process, the simulator on loopback as the only provider.
// Read-only files are made with chmod, or — for root, whom modes do not stop — chattr +i.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDb } from '@/db/client';
import { getRunRecord } from '@/lib/flow/stored-run';
import { simCost, startSimulator, type SimServer } from '@/lib/sim';
import { copyShowcase, GPT_OSS } from '../helpers/showcase';
import { aqven, BIN, ensureCliBuilt } from './aqven-process';
import { until } from '../helpers/until';

beforeAll(ensureCliBuilt, 120_000);

let sim: SimServer | null = null;
const undo: (() => void)[] = [];
afterEach(async () => {
  for (const f of undo.splice(0).reverse()) f();
  await sim?.close();
  sim = null;
});

/** A showcase copy whose openrouter provider is the simulator, playing `script` for gpt-oss. */
async function projectOnSim(script: Parameters<typeof startSimulator>[0] = {}) {
  sim = await startSimulator(script);
  const dir = copyShowcase();
  const file = join(dir, 'providers', 'openrouter.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('https://openrouter.ai/api/v1', sim.baseUrl('openrouter')));
  return { dir, sim, dbPath: join(dir, '.aqven', 'aqven.db') };
}

const ENV = { ...process.env, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined, OPENROUTER_API_KEY: 'sim-key' };
const RUN = (dir: string) => ['run', 'triage', '--json', '--project', dir, '--input', '{"ticket":"I was charged twice"}'];

/** Runs the bin (through `bash -c` first when `shell` is given) and collects its output. */
function start(args: string[], shell?: string) {
  const child = shell ? spawn('bash', ['-c', `${shell}; exec "$0" "$@"`, process.execPath, BIN, ...args], { env: ENV }) : spawn(process.execPath, [BIN, ...args], { env: ENV });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.on('close', (code) => resolve({ code, out, err })));
  return { child, exited };
}

/** Resolves with `p`, or rejects once `ms` passed (a bound, never a measurement). */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))),
  ]);
}

/** Makes `path` unwritable for this process (chattr +i for root), until the test ends. */
function readOnly(path: string): void {
  if (process.getuid?.() === 0) {
    try {
      execFileSync('chattr', ['+i', path], { stdio: 'pipe' });
    } catch (err) {
      throw new Error(`running as root, this test needs chattr +i (an ext4-like file system) to make ${path} read-only: ${String(err)}`);
    }
    undo.push(() => execFileSync('chattr', ['-i', path]));
    return;
  }
  const mode = statSync(path).mode & 0o777;
  chmodSync(path, mode & ~0o222);
  undo.push(() => chmodSync(path, mode));
}

/** A project whose database exists (migrated, closed: no WAL), and the simulator it would call. */
async function projectWithDb() {
  const p = await projectOnSim();
  expect(aqven(['runs', '--project', p.dir]).code).toBe(0);
  for (const f of ['-wal', '-shm']) rmSync(`${p.dbPath}${f}`, { force: true });
  return p;
}

const oneLine = (err: string) => err.trimEnd().split('\n');

describe('aqven run stopped by a signal', () => {
  it('SIGTERM while a request stalls: exit 143 within 5 s, the attempt recorded interrupted, the run interrupted', async () => {
    const { dir, dbPath } = await projectOnSim({ scripts: { [GPT_OSS]: [{ kind: 'stall' }] } });
    const { child, exited } = start(['run', 'long-answer', '--json', '--project', dir, '--input', '{"question":"Why?"}']);
    await until('the first request at the simulator', () => sim!.requests().length === 1);
    child.kill('SIGTERM');
    const res = await within(5_000, 'exit after SIGTERM', exited);
    expect(res.code, res.err).toBe(143);
    const printed = JSON.parse(res.out) as { id: string; status: string };
    expect(printed.status).toBe('interrupted');
    const db = openDb(dbPath);
    try {
      const stored = (await getRunRecord(db, printed.id))!;
      expect(stored).toMatchObject({ status: 'interrupted', error: { code: 'interrupted', node: 'draft', message: 'the run was stopped by SIGTERM' } });
      expect(stored.nodes[0]).toMatchObject({ id: 'draft', status: 'failed', error: { code: 'interrupted' } });
      expect(stored.nodes[0]!.attempts).toHaveLength(1);
      expect(stored.nodes[0]!.attempts[0]).toMatchObject({ seq: 1, outcome: null, error: { message: 'the run was stopped by SIGTERM' } });
      expect(stored.nodes[0]!.attempts[0]!.latencyMs).not.toBeNull();
      // a body that never came: the provider reported no usage, so it is unknown, never a plain 0
      expect(stored.nodes[0]!.attempts[0]).toMatchObject({ usageUnknown: true, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
      expect(stored.usageUnknown).toBe(true);
      expect(sim!.requests()).toHaveLength(1); // nothing was sent after the signal
    } finally {
      await closeDb(dbPath);
    }
  });
});

describe('aqven run stopped by a signal after the provider reported usage', () => {
  it('SIGTERM while a streamed draft stalls after its usage: the interrupted attempt keeps the tokens and cost the provider reported', async () => {
    // the usage chunk comes first, then ~8000 characters of text, then silence
    const text = 'Thanks for writing in. '.repeat(350);
    const stall = { kind: 'stall' as const, early_usage: true, text, usage: { input: 1200, output: 2000 } };
    const { dir, dbPath } = await projectOnSim({ scripts: { [GPT_OSS]: [stall] } });
    const { child, exited } = start(RUN(dir));
    // streamed text in the database: the child has read the stream past its usage chunk
    const db = openDb(dbPath);
    try {
      const chunks = db.$client.prepare(`SELECT count(*) AS n FROM stream_chunks`).pluck();
      await until('streamed text of the draft recorded', () => (chunks.get() as number) > 0);
      child.kill('SIGTERM');
      const res = await within(5_000, 'exit after SIGTERM', exited);
      expect(res.code, res.err).toBe(143);
      const printed = JSON.parse(res.out) as { id: string; status: string; usage: { inputTokens: number } };
      expect(printed.status).toBe('interrupted');
      const stored = (await getRunRecord(db, printed.id))!;
      const draft = stored.nodes.find((n) => n.id === 'draft')!;
      const cost = simCost(1200, 2000); // OpenRouter's own usage.cost
      expect(draft).toMatchObject({ status: 'failed', error: { code: 'interrupted', message: 'the run was stopped by SIGTERM' } });
      expect(draft.attempts).toHaveLength(1);
      expect(draft.attempts[0]).toMatchObject({ outcome: null, usageUnknown: false, usage: { inputTokens: 1200, outputTokens: 2000, costUsd: cost } });
      expect(draft.usage).toEqual({ inputTokens: 1200, outputTokens: 2000, costUsd: cost });
      const classify = stored.nodes.find((n) => n.id === 'classify')!;
      expect(stored.usage.inputTokens).toBe(classify.usage.inputTokens + 1200);
      expect(printed.usage).toEqual(stored.usage);
    } finally {
      await closeDb(dbPath);
    }
  });
});

describe('aqven run on a database it cannot write: exit 3, one line, no provider called', () => {
  it('a read-only database file', async () => {
    const { dir, dbPath } = await projectWithDb();
    readOnly(dbPath);
    const res = aqven(RUN(dir), { OPENROUTER_API_KEY: 'sim-key' });
    expect(res.code, res.err).toBe(3);
    expect(oneLine(res.err)).toEqual([
      `aqven run: the run database ${dbPath} is read-only (SQLITE_READONLY); make the file and its folder writable (chmod u+w "${dbPath}" "${join(dir, '.aqven')}") or set database: in aqven.yaml to a writable path; no provider was called`,
    ]);
    expect(res.out).toBe('');
    expect(sim!.requests()).toEqual([]);
  });

  it('a read-only database folder, and a read-only project folder where none exists yet', async () => {
    const { dir, dbPath } = await projectWithDb();
    readOnly(join(dir, '.aqven'));
    const res = aqven(RUN(dir), { OPENROUTER_API_KEY: 'sim-key' });
    expect(res.code, res.err).toBe(3);
    expect(oneLine(res.err)).toHaveLength(1);
    expect(res.err).toMatch(new RegExp(`^aqven run: cannot open the run database ${dbPath} \\(SQLITE_CANTOPEN\\): its folder ${join(dir, '.aqven')} must exist and be writable`));

    const fresh = await projectOnSim();
    readOnly(fresh.dir);
    const none = aqven(RUN(fresh.dir), { OPENROUTER_API_KEY: 'sim-key' });
    expect(none.code, none.err).toBe(3);
    expect(oneLine(none.err)).toHaveLength(1);
    expect(none.err).toMatch(new RegExp(`^aqven run: cannot create the run database ${fresh.dbPath}: ${join(fresh.dir, '.aqven')} is not writable \\((EACCES|EPERM)\\)`));
    expect(existsSync(fresh.dbPath)).toBe(false);
    expect(sim!.requests()).toEqual([]);
  });

  it('a full disk (ulimit -f): the database cannot even be created', async () => {
    const { dir } = await projectOnSim();
    ensureCliBuilt(); // under the limit the bin could not rebuild itself
    const res = await within(30_000, 'exit', start(RUN(dir), 'ulimit -f 40').exited);
    expect(res.code, res.err).toBe(3);
    expect(oneLine(res.err)).toHaveLength(1);
    expect(res.err).toMatch(/^aqven run: cannot write the run database .*: disk I\/O error \(SQLITE_IOERR\w*\); the file size limit \(ulimit -f: 40960 bytes\)/);
    expect(res.err).toMatch(/; no provider was called\n$/);
    expect(sim!.requests()).toEqual([]);
  });

  it('a disk that fills mid-run: exit 3, the run printed, one line saying whether it is recorded as failed', async () => {
    const { dir, dbPath } = await projectWithDb();
    ensureCliBuilt();
    // the database file already exceeds the limit: the WAL fills within the run
    const res = await within(30_000, 'exit', start(RUN(dir), 'ulimit -f 64').exited);
    expect(res.code, res.err).toBe(3);
    expect(oneLine(res.err)).toHaveLength(1);
    expect(res.err).toMatch(/^aqven run: cannot write the run database .*\(SQLITE_IOERR\w*\); the file size limit \(ulimit -f: 65536 bytes\)/);
    const printed = JSON.parse(res.out) as { id: string; status: string; error: { code: string } };
    expect(printed).toMatchObject({ status: 'failed', error: { code: 'cannot_record' } });
    // never silently lost: stored as failed, or (when even that did not fit) left to the next start
    const db = openDb(dbPath);
    try {
      const stored = (await getRunRecord(db, printed.id))!;
      if (res.err.includes('recorded as failed')) expect(stored).toMatchObject({ status: 'failed', error: { code: 'cannot_record' } });
      else {
        expect(res.err).toMatch(/the next start marks it interrupted\n$/);
        expect(stored.status).toBe('running'); // its lease lapses: swept as interrupted (test/flow, db/run-lease.test.ts)
      }
    } finally {
      await closeDb(dbPath);
    }
  });
});
