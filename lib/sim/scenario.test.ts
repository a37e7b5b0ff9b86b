// Scenario files (YAML/JSON) and the `aqven sim` command built on them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../cli/io';
import { registerSim, SimCliError, startSimCli } from '../cli/sim';
import { parseScenario } from './index';
import { call } from '@/test/helpers/sim-test-client';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aqven-sim-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const YAML = `
# rate limited twice, then a valid answer
scripts:
  "openai/gpt-oss-20b":
    - { kind: status, status: 429, headers: { retry-after: "2" } }
    - { kind: ok, text: "hello" }
  "*":
    - kind: refusal
      text: "I won't email jane@example.com"
chaos: { seed: 7, rate_limit: 0.1 }
latency: { first_token_ms: 0 }
`;

describe('parseScenario', () => {
  it('reads YAML and JSON', () => {
    const s = parseScenario(YAML, 'demo.yaml');
    expect(s.scripts?.['openai/gpt-oss-20b']?.[0]).toEqual({ kind: 'status', status: 429, headers: { 'retry-after': '2' } });
    expect(s.chaos).toEqual({ seed: 7, rate_limit: 0.1 });
    expect(parseScenario(JSON.stringify({ chaos: { drop: 0.5 } }), 'x.json')).toEqual({ chaos: { drop: 0.5 } });
    expect(parseScenario('', 'empty.yaml')).toEqual({});
    expect(parseScenario('chaos: null', 'none.yaml')).toEqual({});
  });

  it('takes the same steps as aqven.yaml, finish reasons included', () => {
    const s = parseScenario('scripts:\n  m:\n    - { kind: provider_error, finish_reason: error, native_finish_reason: MALFORMED_FUNCTION_CALL }\n', 'f.yaml');
    expect(s.scripts?.m?.[0]).toEqual({ kind: 'provider_error', finish_reason: 'error', native_finish_reason: 'MALFORMED_FUNCTION_CALL' });
    // a step's keys are checked too (a typo is not silently ignored)
    expect(() => parseScenario('scripts: { m: [{ kind: ok, txt: "x" }] }', 'typo.yaml')).toThrow(/typo\.yaml:1:28: scripts\["m"\]\[0\]\.txt: unknown key/);
  });

  it('names the file and every problem', () => {
    expect(() => parseScenario('scripts: [', 'broken.yaml')).toThrow(/^broken\.yaml: cannot parse/);
    const err = (() => {
      try {
        parseScenario('scripts: { m: [{ kind: boom }] }\nchaos: { drop: 3 }\nextra: 1', 'bad.yaml');
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toMatch(/^bad\.yaml: invalid scenario/);
    // file:line:col of the field, its path, what is wrong
    expect(err).toContain('bad.yaml:1:18: scripts["m"][0].kind: must be one of ok, invalid');
    expect(err).toContain('bad.yaml:2:10: chaos.drop: must be <= 1 (got 3)');
    expect(err).toContain('bad.yaml:3:1: extra: unknown key');
  });
});

describe('aqven sim', () => {
  it('starts with a scenario and prints the four base URLs', async () => {
    const file = join(dir, 'demo.yaml');
    await writeFile(file, YAML);
    const lines: string[] = [];
    const sim = await startSimCli({ port: '0', scenario: file }, (l) => lines.push(l));
    try {
      for (const d of ['openai', 'openrouter', 'anthropic', 'gemini'] as const) expect(lines.join('\n')).toContain(sim.baseUrl(d));
      const res = await call(sim, 'openrouter', { model: 'openai/gpt-oss-20b' });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('2');
      const refusal = await (await call(sim, 'openai')).json();
      expect(refusal.choices[0].message.refusal).toBe("I won't email jane@example.com");
    } finally {
      await sim.close();
    }
  });

  it('a bad scenario file: clear error naming the file, exit status 2', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'scripts: { m: [{ kind: nope }] }');
    await expect(startSimCli({ scenario: file })).rejects.toThrow(SimCliError);
    await expect(startSimCli({ scenario: join(dir, 'missing.yaml') })).rejects.toThrow(/missing\.yaml: cannot read: ENOENT/);
    await expect(startSimCli({ port: 'abc' })).rejects.toThrow(/--port/);

    // said through the command's io, as every command says it
    const io = captureIo();
    const program = new Command('aqven').exitOverride();
    registerSim(program, io);
    await program.parseAsync(['node', 'aqven', 'sim', '--scenario', file]);
    expect(io.code).toBe(2);
    expect(io.stderr).toContain(`aqven sim: ${file}`);
    expect(io.stderr).toContain('kind');
    expect(io.stdout).toBe('');
  });
});
