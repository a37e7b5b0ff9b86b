import { cpSync, mkdtempSync } from 'node:fs';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { saveEnv } from '@/test/helpers/saved-env';
import { registerCheck, runCheck } from './check';
import { captureIo } from './io';
import { resolveProjectDir } from './project-dir';

const ROOT = resolve(__dirname, '../..');
/** The showcase without its run history: measurements a local `aqven limits` stored there would add W_SCHEMA_LIMIT warnings. */
const SHOWCASE = mkdtempSync(join(tmpdir(), 'aqven-check-showcase-'));
cpSync(join(ROOT, 'showcase'), SHOWCASE, { recursive: true, filter: (src) => !src.includes('.aqven') });

/** A copy of the showcase whose classifier has lost its fallback_models (lines keep their numbers). */
async function brokenShowcase(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aqven-check-'));
  await cp(SHOWCASE, dir, { recursive: true });
  const file = join(dir, 'agents/classifier.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace('fallback_models:\n- "openrouter:openai/gpt-oss-20b"', '#\n#'));
  return dir;
}

describe('aqven check', () => {
  it('prints the warning and a summary for the showcase, and exits 0', async () => {
    const io = captureIo();
    const program = new Command('aqven');
    registerCheck(program, io);
    await program.parseAsync(['check', '--project', SHOWCASE], { from: 'user' });
    expect(io.code).toBe(0);
    const env = process.env.OPENROUTER_API_KEY;
    const summary = io.stdout.trim().split('\n').pop();
    expect(summary).toBe(env ? '✓ showcase: 4 agents, 3 flows, 0 errors, 0 warnings' : '✓ showcase: 4 agents, 3 flows, 0 errors, 1 warning');
  });

  it('prints file:line:col, the code and the hint for an error, and exits 1', async () => {
    const dir = await brokenShowcase();
    const io = captureIo();
    const code = await runCheck({ project: dir, env: { OPENROUTER_API_KEY: 'sk-test' } }, io);
    expect(code).toBe(1);
    expect(io.stdout).toBe(
      'agents/classifier.yaml:10:13: error E_OUTCOME_FALLBACK output.on_error is "fallback" but the agent has no fallback_models\n' +
        '  hint: add fallback_models (a list of "provider:model-id"), or set output.on_error to "retry" or "fail"\n' +
        '  see: aqven explain E_OUTCOME_FALLBACK\n' +
        `✗ ${dir.split('/').pop()}: 1 error, 0 warnings\n`,
    );
  });

  it('prints a JSON array of diagnostics with --json', async () => {
    const dir = await brokenShowcase();
    const io = captureIo();
    const code = await runCheck({ project: dir, json: true, env: {} }, io);
    expect(code).toBe(1);
    const out = JSON.parse(io.stdout);
    expect(out).toEqual([
      {
        file: 'providers/openrouter.yaml',
        line: 7,
        col: 14,
        severity: 'warning',
        code: 'W_API_KEY',
        message: expect.stringContaining('OPENROUTER_API_KEY is not set'),
        hint: expect.any(String),
        path: ['api_key_env'],
      },
      {
        file: 'agents/classifier.yaml',
        line: 10,
        col: 13,
        severity: 'error',
        code: 'E_OUTCOME_FALLBACK',
        message: 'output.on_error is "fallback" but the agent has no fallback_models',
        hint: expect.stringContaining('fallback_models'),
        path: ['output', 'on_error'],
      },
    ]);
    // backward compatible: the first version's keys in their order, then the field path
    for (const d of out) expect(Object.keys(d)).toEqual(['file', 'line', 'col', 'severity', 'code', 'message', 'hint', 'path']);
  });

  it('prints [] with --json for a clean project', async () => {
    const io = captureIo();
    expect(await runCheck({ project: SHOWCASE, json: true, env: { OPENROUTER_API_KEY: 'sk-test' } }, io)).toBe(0);
    expect(JSON.parse(io.stdout)).toEqual([]);
  });

  it('sets the exit status of the command (1 on errors) through its io', async () => {
    const dir = await brokenShowcase();
    // the command as registered, in this process: its io hears the lines and the status (the real process: test/cli/aqven-command.test.ts)
    const run = async (project: string) => {
      const io = captureIo();
      const restore = saveEnv(['OPENROUTER_API_KEY']);
      process.env.OPENROUTER_API_KEY = 'sk-test';
      try {
        const program = new Command('aqven');
        registerCheck(program, io);
        await program.parseAsync(['check', '--project', project], { from: 'user' });
      } finally {
        restore();
      }
      return io;
    };
    const bad = await run(dir);
    expect(bad.stdout).toContain('agents/classifier.yaml:10:13: error E_OUTCOME_FALLBACK');
    expect(bad.code).toBe(1);
    const good = await run(SHOWCASE);
    expect(good.stdout).toContain('✓ showcase: 4 agents, 3 flows, 0 errors, 0 warnings');
    expect(good.code).toBe(0);
  });
});

describe('aqven check on a file with more errors than are listed', () => {
  /** The showcase with 60,000 unclosed "{{" in the prompt of triage's classify node. */
  async function bombed(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'aqven-check-'));
    await cp(SHOWCASE, dir, { recursive: true });
    const file = join(dir, 'flows/triage.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('prompt: "Sort this ticket into a queue: {{ input.ticket }}"', `prompt: "${'{{'.repeat(60_000)}"`));
    return dir;
  }

  it('--json lists 100 errors of the file and one E_MORE entry with the count left out', async () => {
    const io = captureIo();
    expect(await runCheck({ project: await bombed(), json: true, env: { OPENROUTER_API_KEY: 'sk-test' } }, io)).toBe(1);
    const out = JSON.parse(io.stdout) as Record<string, unknown>[];
    expect(out).toHaveLength(101);
    expect(out.slice(0, 100).every((d) => d.file === 'flows/triage.yaml' && d.code === 'E_TEMPLATE')).toBe(true);
    expect(out[100]).toEqual({
      file: 'flows/triage.yaml',
      line: 1,
      col: 1,
      severity: 'error',
      code: 'E_MORE',
      message: 'and 59900 more errors in this file, not listed',
      hint: 'fix the errors above and run aqven check again; at most 100 errors are listed per file',
      path: [],
      omitted: 59_900,
    });
    // the entries of the first version keep their keys; only E_MORE adds one
    for (const d of out.slice(0, 100)) expect(Object.keys(d)).toEqual(['file', 'line', 'col', 'severity', 'code', 'message', 'hint', 'path']);
    expect(io.stdout.length).toBeLessThan(100_000);
  });

  it('the text summary counts the errors left out', async () => {
    const io = captureIo();
    const dir = await bombed();
    expect(await runCheck({ project: dir, env: { OPENROUTER_API_KEY: 'sk-test' } }, io)).toBe(1);
    const lines = io.stdout.trim().split('\n');
    expect(lines.at(-4)).toBe('flows/triage.yaml:1:1: error E_MORE and 59900 more errors in this file, not listed');
    expect(lines.at(-1)).toBe(`✗ ${dir.split('/').pop()}: 60000 errors, 0 warnings`);
  });
});

describe('resolveProjectDir', () => {
  it('takes --project, then $AQVEN_PROJECT, then ./showcase', () => {
    expect(resolveProjectDir('demo', { AQVEN_PROJECT: '/p' }, '/work')).toBe('/work/demo');
    expect(resolveProjectDir(undefined, { AQVEN_PROJECT: '/p' }, '/work')).toBe('/p');
    expect(resolveProjectDir(undefined, {}, '/work')).toBe('/work/showcase');
  });
});
