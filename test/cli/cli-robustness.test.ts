// What a user meets when the CLI's surroundings are wrong (DESIGN: CLI): a PostgreSQL server that
// cannot be reached, an AQVEN_DATABASE_URL of another database, a --project that is a file or
// empty, a reader that closes the pipe. Each ends in one line and a documented status, never a
// stack. The command lines run in this process (aqvenHere); what needs the real bin in a process
// (its working folder, a closed pipe) runs it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '@/lib/sim';
import { copyShowcase, GPT_OSS } from '../helpers/showcase';
import { aqven, aqvenHere, BIN, ensureCliBuilt } from './aqven-process';

beforeAll(ensureCliBuilt, 120_000);

/** A loopback port nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The bin with stdout already closed by its reader, as `| head -1` leaves it once it has its line. */
function withClosedOutput(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined } });
  let err = '';
  child.stdout.destroy();
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, err })));
}

describe('a PostgreSQL server that cannot be reached', () => {
  it('is one line naming the database without its password, exit 3, for every command that opens it', async () => {
    const url = `postgres://aqven:s3cret-pw@127.0.0.1:${await closedPort()}/aqven`;
    const dir = copyShowcase();
    const commands = [
      ['runs'],
      ['show', '0123abcd'],
      ['search', 'charged'],
      ['run', 'triage', '--simulate', '--input', '{"ticket":"x"}'],
      ['replay', '0123abcd', 'classify'],
      ['runs', 'purge', '--older-than', '90d'],
      ['runs', 'reconcile'],
      ['limits', 'openrouter:openai/gpt-oss-20b', '--simulate'],
    ];
    for (const args of commands) {
      const res = await aqvenHere([...args, '--project', dir], { AQVEN_DATABASE_URL: url });
      const what = `aqven ${args.join(' ')}: ${res.err}`;
      expect(res.code, what).toBe(3);
      expect(res.err.trim().split('\n'), what).toHaveLength(1);
      expect(res.err, what).toMatch(/cannot connect to the PostgreSQL database postgres:\/\/aqven:\*\*\*@127\.0\.0\.1:\d+\/aqven: connect ECONNREFUSED/);
      expect(res.err, what).not.toContain('s3cret-pw');
      expect(res.err, what).not.toMatch(/\n\s+at /);
    }
  }, 120_000);
});

describe('AQVEN_DATABASE_URL', () => {
  it('naming another database is refused in one line without its password, exit 2, and creates nothing', async () => {
    const dir = copyShowcase();
    // the real bin in a folder of its own: nothing is made in its working folder
    const cwd = mkdtempSync(join(tmpdir(), 'aqven-cwd-'));
    const res = aqven(['run', 'triage', '--simulate', '--project', dir, '--input', '{"ticket":"x"}'], { AQVEN_DATABASE_URL: 'mysql://user:pw-123@db/aqven' }, { cwd });
    expect(res.code).toBe(2);
    expect(res.err.trim()).toMatch(
      /^aqven run: AQVEN_DATABASE_URL is a mysql:\/\/ URL; it must be a PostgreSQL URL \(postgres:\/\/user:password@host:5432\/database, or postgresql:\/\/…\) or the path of a SQLite file$/,
    );
    expect(res.err).not.toContain('pw-123');
    expect(readdirSync(cwd)).toEqual([]); // no ./mysql:/user:pw-123@db folder
    expect(existsSync(join(dir, '.aqven'))).toBe(false);
    for (const args of [['runs'], ['runs', 'purge', '--older-than', '1d'], ['db', 'status'], ['replay', '0123abcd', 'classify']]) {
      const other = await aqvenHere([...args, '--project', dir], { AQVEN_DATABASE_URL: 'mysql://user:pw-123@db/aqven' });
      expect(other.code, other.err).toBe(2);
      expect(other.err.trim().split('\n')).toHaveLength(1);
      expect(other.err).toContain('AQVEN_DATABASE_URL is a mysql:// URL');
    }
  }, 60_000);

  it('a postgres:// URL node-postgres cannot read is refused as bad configuration, exit 2', async () => {
    const res = await aqvenHere(['runs', '--project', copyShowcase()], { AQVEN_DATABASE_URL: 'postgres://aqven:pw@[bad/aqven' });
    expect(res.code).toBe(2);
    expect(res.err.trim()).toMatch(/^aqven runs: AQVEN_DATABASE_URL is a postgres:\/\/ URL that cannot be read/);
    expect(res.err).not.toMatch(/\n\s+at /);
  });

  it('may still be the path of a SQLite file', async () => {
    const dir = copyShowcase();
    const file = join(mkdtempSync(join(tmpdir(), 'aqven-db-')), 'elsewhere.db');
    const run = await aqvenHere(['run', 'triage', '--simulate', '--project', dir, '--input', '{"ticket":"x"}'], { AQVEN_DATABASE_URL: file });
    expect(run.code, run.err).not.toBe(2);
    expect(existsSync(file)).toBe(true);
  }, 60_000);
});

describe('--project', () => {
  it('naming a file is one line and exit 2 for every command, never a stack', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'aqven-file-')), 'notes.txt');
    writeFileSync(file, 'not a project\n');
    for (const args of [
      ['run', 'triage', '--input', '{}'],
      ['replay', '0123abcd', 'classify'],
      ['limits', 'openrouter:x'],
      ['runs', 'reconcile'],
      ['runs'],
      ['check'],
      ['db', 'status'],
    ]) {
      const res = await aqvenHere([...args, '--project', file]);
      const what = `aqven ${args.join(' ')}: ${res.err}`;
      expect(res.code, what).toBe(2);
      expect(res.err.trim(), what).toMatch(new RegExp(`^aqven(?: [a-z ]+)?: --project ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a folder`));
      expect(res.err.trim().split('\n'), what).toHaveLength(1);
    }
  }, 60_000);

  it('empty is refused, not taken for ./showcase', async () => {
    for (const args of [['runs'], ['run', 'triage', '--input', '{}'], ['check']]) {
      const res = await aqvenHere([...args, '--project', '']);
      expect(res.code, res.err).toBe(2);
      expect(res.err).toMatch(/--project is empty: give the project folder/);
    }
  });

  it('aqven init with an empty folder name says so', async () => {
    const res = await aqvenHere(['init', '']);
    expect(res.code).toBe(2);
    expect(res.err.trim()).toBe('aqven init: the folder name is empty: give the folder of the new project, e.g. aqven init support-bot');
  });
});

describe('a reader that closes the pipe', () => {
  it('ends aqven check quietly with its own status', async () => {
    const clean = await withClosedOutput(['check', '--project', copyShowcase()]);
    expect(clean).toEqual({ code: 0, err: expect.not.stringMatching(/EPIPE|Unhandled/) });
    const broken = mkdtempSync(join(tmpdir(), 'aqven-broken-'));
    writeFileSync(join(broken, 'aqven.yaml'), 'name: x\nunknown: 1\n');
    const failing = await withClosedOutput(['check', '--project', broken]);
    expect(failing.code).toBe(1);
    expect(failing.err).toBe('');
  }, 60_000);

  it('ends aqven init quietly once the project is made', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'aqven-init-')), 'p');
    const res = await withClosedOutput(['init', dir]);
    expect(res).toEqual({ code: 0, err: '' });
    expect(existsSync(join(dir, 'aqven.yaml'))).toBe(true);
  }, 60_000);
});

describe('text from a provider', () => {
  const EVIL = '\u001b[31mRED\u001b]0;pwned\u0007 \u202Egnp.exe\r';
  it('reaches the terminal escaped in aqven run, show and search — never as raw control codes', async () => {
    const sim = await startSimulator({ scripts: { [GPT_OSS]: Array.from({ length: 8 }, () => ({ kind: 'provider_error' as const, message: EVIL })) } });
    try {
      const dir = copyShowcase();
      const file = join(dir, 'providers', 'openrouter.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('https://openrouter.ai/api/v1', sim.baseUrl('openrouter')));
      const env = { OPENROUTER_API_KEY: 'sim-key' };
      const run = await aqvenHere(['run', 'long-answer', '--project', dir, '--input', '{"question":"Why?"}'], env);
      expect(run.code, run.err).toBe(1);
      const id = /^run (\S+)/.exec(run.out)![1]!;
      const show = await aqvenHere(['show', id, '--project', dir], env);
      const search = await aqvenHere(['search', 'pwned', '--project', dir], env);
      for (const [what, text] of [
        ['run', run.out],
        ['show', show.out],
        ['search', search.out],
      ] as const) {
        expect(text, what).toContain('\\u{001B}[31mRED\\u{001B}]0;');
        expect(text, what).toContain('\\u{0007} \\u{202E}gnp.exe');
        expect(text, what).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
      }
      // --json stays JSON: the text is there as sent, JSON-escaped
      const json = await aqvenHere(['show', id, '--json', '--project', dir], env);
      expect(json.out).toContain('\\u001b[31mRED');
      expect(JSON.stringify(JSON.parse(json.out))).toContain('pwned');
    } finally {
      await sim.close();
    }
  }, 120_000);
});

describe('--input-file', () => {
  it('is read to one byte past the input cap at most: /dev/zero is refused as the cap refuses an input', async () => {
    const res = await aqvenHere(['run', 'triage', '--simulate', '--project', copyShowcase(), '--input-file', '/dev/zero'], { AQVEN_MAX_INPUT_BYTES: '4096' });
    expect(res.code).toBe(2);
    expect(res.err.trim()).toBe(
      'aqven run: --input-file /dev/zero is more than 4,096 bytes; a run input may be at most 4,096 bytes (4 KiB, AQVEN_MAX_INPUT_BYTES) — nothing was stored',
    );
  });
});
