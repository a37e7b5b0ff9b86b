// `aqven run`, `runs`, `show` and `search` in-process, through their CliIo (lib/cli/run.ts, runs.ts):
// what a user reads on stdout and stderr and the exit status, for a good run and for every kind of
// bad usage — without a process per case (test/cli/aqven-command.test.ts keeps the real process).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '@/lib/cli/io';
import { runRunCommand } from '@/lib/cli/run';
import { runRunsCommand, runSearchCommand, runShowCommand } from '@/lib/cli/runs';
import { copyShowcase } from '../helpers/showcase';

const run = async (flow: string, opts: Parameters<typeof runRunCommand>[1]) => {
  const io = captureIo();
  const code = await runRunCommand(flow, opts, io);
  return { stdout: io.stdout, stderr: io.stderr, code };
};

describe('aqven run through its CliIo', () => {
  const dir = copyShowcase();

  it('--simulate --json prints the run record on stdout and exits with its status; show --json reads the same record back', async () => {
    const res = await run('triage', { project: dir, simulate: true, json: true, input: '{"ticket":"I was charged twice"}' });
    const record = JSON.parse(res.stdout);
    expect(record).toMatchObject({ flow: 'triage', input: { ticket: 'I was charged twice' } });
    expect(res.code).toBe(record.status === 'succeeded' ? 0 : 1);
    expect(res.stderr).not.toContain('W_API_KEY');
    const io = captureIo();
    expect(await runShowCommand(record.id.slice(0, 8), { project: dir, json: true }, io)).toBe(0);
    expect(JSON.parse(io.stdout)).toMatchObject({ id: record.id, status: record.status });
  });

  it.each([
    ['both inputs', { input: '{}', inputFile: '/dev/null' }, 'aqven run: give --input or --input-file, not both\n'],
    ['input that is not JSON', { input: '{ticket' }, /^aqven run: --input is not valid JSON: /],
    ['an input file that is not there', { inputFile: '/no/such/file.json' }, 'aqven run: cannot read --input-file /no/such/file.json: ENOENT\n'],
    ['an input its schema refuses', { input: '{"ticket": 1}' }, /^aqven run: .*input\.ticket must be string/],
  ])('%s: exit 2 and one line on stderr, nothing on stdout', async (_what, opts, said) => {
    const res = await run('triage', { project: dir, simulate: true, ...opts });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    if (typeof said === 'string') expect(res.stderr).toBe(said);
    else expect(res.stderr).toMatch(said);
  });

  it('an unknown flow, --queue in SQLite mode and a project that fails check are bad usage (exit 2)', async () => {
    const unknown = await run('nope', { project: dir, simulate: true });
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('unknown flow "nope"')]);
    const queued = await run('triage', { project: dir, queue: true, input: '{"ticket":"x"}' });
    expect([queued.code, queued.stderr]).toEqual([2, 'aqven run: --queue needs AQVEN_DATABASE_URL=postgres://…: runs are queued only in PostgreSQL mode\n']);
    const broken = copyShowcase();
    writeFileSync(join(broken, 'agents', 'writer.yaml'), 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "no-colon"\n');
    const res = await run('triage', { project: broken, simulate: true, input: '{"ticket":"x"}' });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('agents/writer.yaml:3:8: error E_MODEL');
    expect(res.stderr.trim().split('\n').at(-1)).toMatch(/^aqven run: the project fails aqven check with \d+ error\(s\)/);
  });
});

describe('aqven runs, search and show through their CliIo', () => {
  const dir = copyShowcase();

  it('bad filters and limits are bad usage (exit 2) naming the flag; an unknown run is exit 1', async () => {
    let io = captureIo();
    expect(await runRunsCommand({ project: dir, limit: '20', status: 'bogus' }, io)).toBe(2);
    expect(io.stderr).toMatch(/^aqven runs: --status /);
    io = captureIo();
    expect(await runRunsCommand({ project: dir, limit: 'x' }, io)).toBe(2);
    io = captureIo();
    expect(await runSearchCommand(['invoice'], { project: dir, limit: '0' }, io)).toBe(2);
    expect(io.stderr).toBe('aqven search: --limit must be a whole number from 1 to 100, --before a whole number\n');
    io = captureIo();
    expect(await runShowCommand('no-such-run', { project: dir }, io)).toBe(1);
    expect(io.stdout).toBe('');
  });

  it('a filter that matches nothing says so, with exit 0', async () => {
    const io = captureIo();
    expect(await runRunsCommand({ project: dir, limit: '20', flow: 'no-such-flow' }, io)).toBe(0);
    expect(io.stdout).toBe('no runs match\n');
  });
});
