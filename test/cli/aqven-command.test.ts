// The `aqven` command as a user runs it: the bin script in a real process for its exit statuses
// (check); the same command lines in this process (aqvenHere) for the rest of what they print and
// exit with, and the environment they read (AQVEN_SIMULATE).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliAuthor } from '@/db/snapshot-queries';
import { projectFilesHash, readProjectFiles } from '@/lib/project';
import { copyShowcase } from '../helpers/showcase';
import { aqven, aqvenHere, ensureCliBuilt } from './aqven-process';

beforeAll(ensureCliBuilt, 120_000);

describe('the aqven command', () => {
  it('check: the showcase passes (exit 0); without fallback_models the classifier fails at its on_error line (exit 1)', () => {
    expect(aqven(['check', '--project', 'showcase']).code).toBe(0);
    const dir = copyShowcase();
    const file = join(dir, 'agents', 'classifier.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/fallback_models:\n- "[^"]+"\n/, ''));
    const res = aqven(['check', '--project', dir]);
    expect(res.code).toBe(1);
    expect(res.out).toContain('agents/classifier.yaml:8:13: error E_OUTCOME_FALLBACK output.on_error is "fallback" but the agent has no fallback_models');
  });

  it('run --simulate --json prints the run record, which show --json prints again from the database', async () => {
    const dir = copyShowcase();
    const run = await aqvenHere(['run', 'triage', '--simulate', '--json', '--project', dir, '--input', '{"ticket":"I was charged twice"}']);
    expect(run.err).not.toContain('W_API_KEY'); // simulated providers need no key
    const record = JSON.parse(run.out);
    expect(run.code).toBe(record.status === 'succeeded' ? 0 : 1);
    expect(record).toMatchObject({ flow: 'triage', input: { ticket: 'I was charged twice' } });
    expect(Object.keys(record)).toEqual([
      'id',
      'flow',
      'kind',
      'replayOf',
      'replayNode',
      'status',
      'input',
      'output',
      'error',
      'usage',
      'usageUnknown',
      'startedAt',
      'finishedAt',
      'startedBy',
      'projectHash',
      'snapshotId',
      'nodes',
    ]);
    // who started it (the OS login) and the files it ran under
    expect(record).toMatchObject({ startedBy: cliAuthor(), projectHash: projectFilesHash(await readProjectFiles(dir)), snapshotId: null });
    expect(record.startedBy).toMatch(/^cli:./);
    const shown = await aqvenHere(['show', record.id, '--json', '--project', dir]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toEqual(record);
    expect((await aqvenHere(['show', record.id, '--project', dir])).out.split('\n')[1]).toBe(`started by ${record.startedBy} · project ${record.projectHash.slice(0, 12)}`);
    const runs = await aqvenHere(['runs', '--json', '--project', dir]);
    expect(JSON.parse(runs.out).map((r: { id: string }) => r.id)).toEqual([record.id]);
  });

  it("runs takes the run list's filters as options (the dashboard's words), and says when none match", async () => {
    const dir = copyShowcase();
    const ran = async (flow: string, input: string) =>
      JSON.parse((await aqvenHere(['run', flow, '--simulate', '--json', '--project', dir, '--input', input])).out) as { id: string; status: string };
    const t1 = await ran('triage', '{"ticket":"I was charged twice"}');
    const l1 = await ran('long-answer', '{"question":"Why?"}');
    const t2 = await ran('triage', '{"ticket":"The app crashes"}');
    const ids = async (...args: string[]) => {
      const res = await aqvenHere(['runs', '--json', '--project', dir, ...args]);
      expect(res.code, res.err).toBe(0);
      return (JSON.parse(res.out) as { id: string }[]).map((r) => r.id);
    };
    expect(await ids()).toEqual([t2.id, l1.id, t1.id]); // newest first
    expect(await ids('--flow', 'triage')).toEqual([t2.id, t1.id]);
    expect(await ids('--flow', 'long-answer', '--status', l1.status)).toEqual([l1.id]);
    expect(await ids('--range', '1h', '--limit', '2')).toEqual([t2.id, l1.id]);
    expect(await ids('--kind', 'replay')).toEqual([]);
    expect(await ids('--to', '1')).toEqual([]);
    const none = await aqvenHere(['runs', '--project', dir, '--status', 'cancelled']);
    expect([none.code, none.out]).toEqual([0, 'no runs match\n']);
    for (const [args, words] of [
      [['--status', 'nope'], 'aqven runs: --status must be one of queued, running, succeeded, failed, interrupted, cancelled'],
      [['--from', 'yesterday'], 'aqven runs: --from must be an ISO 8601 time with its zone (2026-12-01T09:00:00Z) or epoch milliseconds'],
      [['--limit', '501'], 'aqven runs: --limit must be a whole number from 1 to 500'],
    ] as const) {
      const res = await aqvenHere(['runs', '--project', dir, ...args]);
      expect([res.code, res.err]).toEqual([2, `${words}\n`]);
    }
  });

  it('run prints a line per attempt, and AQVEN_SIMULATE=1 stands for --simulate', async () => {
    const dir = copyShowcase();
    const res = await aqvenHere(['run', 'long-answer', '--project', dir, '--input', '{"question":"Why?"}'], { AQVEN_SIMULATE: '1' });
    expect([0, 1]).toContain(res.code);
    expect(res.out).toMatch(/^run \S+ {2}flow long-answer {2}(SUCCEEDED|FAILED)/);
    expect(res.out).toMatch(/ {4}#1 openrouter:openai\/gpt-oss-20b {2}/);
  });

  it('bad usage exits 2 with a clear message; an unknown run exits 1', async () => {
    const dir = copyShowcase();
    const bad = await aqvenHere(['run', 'triage', '--simulate', '--project', dir, '--input', '{"ticket": 1}']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('input.ticket must be string');
    const notJson = await aqvenHere(['run', 'triage', '--simulate', '--project', dir, '--input', '{ticket']);
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain('--input is not valid JSON');
    const unknownFlow = await aqvenHere(['run', 'nope', '--simulate', '--project', dir]);
    expect(unknownFlow.code).toBe(2);
    expect(unknownFlow.err).toContain('unknown flow "nope"');
    expect((await aqvenHere(['show', 'no-such-run', '--project', dir])).code).toBe(1);
    writeFileSync(join(dir, 'agents', 'writer.yaml'), 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "no-colon"\n');
    const broken = await aqvenHere(['run', 'triage', '--simulate', '--project', dir, '--input', '{"ticket":"x"}']);
    expect(broken.code).toBe(2);
    expect(broken.err).toContain('agents/writer.yaml:3:8: error E_MODEL');
    expect((await aqvenHere(['runs', '--limit', 'x', '--project', dir])).code).toBe(2);
  });

  it('run without --simulate warns about a missing key before it calls, and a failed run exits 1', async () => {
    const dir = copyShowcase();
    const file = join(dir, 'providers', 'openrouter.yaml');
    // nothing listens on port 9: every try is refused at once, one try per attempt
    writeFileSync(file, readFileSync(file, 'utf8').replace('https://openrouter.ai/api/v1', 'http://127.0.0.1:9/api/v1').replace('max_attempts: 3 ', 'max_attempts: 1 '));
    const res = await aqvenHere(['run', 'triage', '--project', dir, '--input', '{"ticket":"x"}'], { OPENROUTER_API_KEY: undefined });
    expect(res.err).toContain('warning W_API_KEY OPENROUTER_API_KEY is not set');
    expect(res.code).toBe(1);
    expect(res.out).toMatch(/FAILED/);
    expect(res.out).toMatch(/could not be reached/);
  });
});
