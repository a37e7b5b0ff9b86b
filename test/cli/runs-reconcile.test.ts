// `aqven runs reconcile` as a user runs it, over the simulator's OpenRouter flavour: what it found
// for answers cut off mid-body (exit 0), what is still pending (exit 1, and how to finish), a key
// the provider refuses (given up, the key never printed), --json, and a bad --wait (exit 2).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDatabase, openDatabase } from '@/db/client';
import { runFlow } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { loadProject } from '@/lib/project';
import { simCost, startSimulator } from '@/lib/sim';
import type { SimGenerationOptions, SimServer } from '@/lib/sim/types';
import { oneNodeProject } from '../../bench/one-node-project';
import { captureIo } from '@/lib/cli/io';
import { runRunsReconcile } from '@/lib/cli/runs-reconcile';

const MODEL = 'openai/gpt-oss-20b';
const KEY = 'sk-or-v1-reconcile-secret-7777';
const DROPPED = { input: 120, output: 30, thoughts: 0 };

describe('aqven runs reconcile', () => {
  let dir: string;
  const sims: SimServer[] = [];

  /** the project's openrouter provider on a fresh simulator; a run on it whose first reply is dropped mid-body */
  async function cutRun(generations?: SimGenerationOptions): Promise<string> {
    const sim = await startSimulator({ generations, scripts: { [MODEL]: [{ kind: 'drop', when: 'during_body', usage: DROPPED }, { kind: 'ok' }] } });
    sims.push(sim);
    writeFileSync(
      join(dir, 'providers/openrouter.yaml'),
      [
        'apiVersion: "aqven/v1"',
        'kind: "Provider"',
        'name: "openrouter"',
        'api: "openai"',
        `base_url: "${sim.baseUrl('openrouter')}"`,
        'api_key_env: "OPENROUTER_API_KEY"',
        'transport: { backoff: { base: "1ms", factor: 1, cap: "1ms", jitter: 0 } }',
      ].join('\n'),
    );
    const project = (await loadProject(dir, { env: {} })).project!;
    const db = await openDatabase(project.databasePath);
    try {
      const r = await runFlow({ project, flow: 'one', input: { ticket: 'cut' }, env: { OPENROUTER_API_KEY: KEY }, db });
      expect(r.nodes[0]!.attempts[0]!.usageUnknown).toBe(true);
      return r.id;
    } finally {
      await closeDatabase(db);
    }
  }
  const reconcile = async (o: { wait?: string; json?: boolean; key?: string } = {}) => {
    const io = captureIo();
    const code = await runRunsReconcile({ project: dir, wait: o.wait, json: o.json, env: { OPENROUTER_API_KEY: o.key ?? KEY } }, io);
    return { code, out: io.stdout, err: io.stderr };
  };
  const record = async (runId: string) => {
    const project = (await loadProject(dir, { env: {} })).project!;
    const db = await openDatabase(project.databasePath);
    try {
      return (await getRunRecord(db, runId))!;
    } finally {
      await closeDatabase(db);
    }
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aqven-reconcile-'));
    for (const [f, text] of Object.entries(oneNodeProject('reconcile', { model: MODEL }))) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    mkdirSync(join(dir, 'providers'), { recursive: true });
  });
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the usage of a cut-off answer, says so, and exits 0', async () => {
    const runId = await cutRun();
    const r = await reconcile();
    expect(r.code).toBe(0);
    expect(r.out).toContain(`1 cut-off answer: usage found for 1 (${DROPPED.input + DROPPED.output} tokens, $`);
    const rec = await record(runId);
    expect(rec.usageUnknown).toBe(false);
    expect(rec.nodes[0]!.attempts[0]).toMatchObject({ usageLookup: 'found', usageUnknown: false });
    expect(rec.nodes[0]!.attempts[0]!.usage.costUsd).toBeGreaterThanOrEqual(simCost(DROPPED.input, DROPPED.output));
    expect(rec.usage.inputTokens).toBeGreaterThanOrEqual(DROPPED.input);
    // again: nothing left
    const again = await reconcile();
    expect(again).toMatchObject({ code: 0 });
    expect(again.out).toContain('no cut-off answers waiting');
  });

  it('a key the provider refuses: given up at once, the key never printed', async () => {
    const runId = await cutRun({ key: 'sk-or-v1-another-key' });
    const r = await reconcile();
    expect(r.code).toBe(0);
    expect(r.out).toContain('1 given up');
    expect(r.out).toContain('HTTP 401');
    expect(r.out + r.err).not.toContain(KEY);
    expect((await record(runId)).nodes[0]!.attempts[0]).toMatchObject({ usageLookup: 'gave_up', usageUnknown: true });
  });

  it('stats not ready: exit 1, when the next lookup is due and how to finish; --json; a bad --wait is exit 2', async () => {
    await cutRun({ readyAfterMs: 3_600_000 });
    const r = await reconcile();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/1 still pending, next lookup in [12] s/);
    expect(r.out).toContain('HTTP 404');
    expect(r.out).toContain('aqven runs reconcile` again');
    const j = await reconcile({ json: true });
    expect(j.code).toBe(1);
    expect(JSON.parse(j.out)).toMatchObject({ looked: 0, found: 0, pending: 1 });
    const bad = await reconcile({ wait: 'soon' });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--wait must be a number of seconds');
  });

  it('--wait looks up again until the stats are ready', async () => {
    const runId = await cutRun({ readyAfterLookups: 1 }); // the first pass comes too early, however long the cut and the start took
    const r = await reconcile({ wait: '8' });
    // (each simulator numbers its generations from 1: the earlier test's pending id is this one's too, and found with it)
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/usage found for [12] /);
    expect(r.out).toContain('HTTP 404'); // the first pass came too early
    const a = (await record(runId)).nodes[0]!.attempts[0]!;
    expect(a).toMatchObject({ usageLookup: 'found', usageUnknown: false });
    expect(a.usage.costUsd).toBeGreaterThanOrEqual(simCost(DROPPED.input, DROPPED.output));
  }, 20_000);
});
