// The usage of an answer cut off mid-body after its headers (DESIGN: Usage unknown, never zero):
// OpenRouter named the generation, so the try keeps its id, pending, and a lookup pass adds what
// the provider billed to the attempt, node, run and agent_daily — once, even with two processes
// looking up together; a 404 (stats not ready) is asked again later, a refused key gives up at once
// without showing the key, and lookups end after MAX_LOOKUPS. Over the simulator, on both dialects.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '@/db/types';
import { runFlow } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { formatRun } from '@/lib/cli/format-run';
import { describeLookups, lookupDelayMs, lookUpUsage, MAX_LOOKUPS } from '@/lib/flow/usage-lookup';
import { loadProject, type Project } from '@/lib/project';
import { simCost, startSimulator } from '@/lib/sim';
import type { SimGenerationOptions, SimServer } from '@/lib/sim/types';
import { oneNodeProject } from '../../bench/one-node-project';
import { DIALECTS, openTestDb, otherProcess, type TestDb } from '../helpers/dialects';

const MODEL = 'openai/gpt-oss-20b';
const KEY = 'sk-or-v1-lookup-test-secret-4242';
const DROPPED = { input: 120, output: 30, thoughts: 0 };
const KEPT = { input: 50, output: 10, thoughts: 0 };

/** a run whose first reply is dropped mid-body after its headers, and whose second is ok */
async function cutRun(db: Db, project: Project, sim: SimServer, label: string): Promise<string> {
  sim.loadScripts({
    [MODEL]: [
      { kind: 'drop', when: 'during_body', usage: DROPPED },
      { kind: 'ok', usage: KEPT },
    ],
  });
  const base = project.providers.openrouter!;
  const providers = {
    ...project.providers,
    openrouter: { ...base, baseUrl: sim.baseUrl('openrouter'), transport: { ...base.transport, backoff: { baseMs: 1, factor: 1, capMs: 1, jitter: 0 } } },
  };
  const r = await runFlow({ project, flow: 'one', input: { ticket: label }, providers, env: { OPENROUTER_API_KEY: KEY }, db });
  expect(r.status).toBe('succeeded');
  return r.id;
}

describe.each(DIALECTS)('usage of cut-off answers looked up later, on %s', (dialect) => {
  let t: TestDb;
  let dir: string;
  let project: Project;
  const sims: SimServer[] = [];
  const sim = async (generations?: SimGenerationOptions) => {
    const s = await startSimulator({ generations });
    sims.push(s);
    return s;
  };
  const routed = (s: SimServer, key = KEY) => ({
    providers: { ...project.providers, openrouter: { ...project.providers.openrouter!, baseUrl: s.baseUrl('openrouter') } },
    env: { OPENROUTER_API_KEY: key },
  });

  beforeAll(async () => {
    t = await openTestDb(dialect);
    dir = mkdtempSync(join(tmpdir(), 'aqven-lookup-'));
    for (const [f, text] of Object.entries(oneNodeProject('lookup', { model: MODEL }))) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    const loaded = await loadProject(dir, { env: {} });
    project = loaded.project!;
  }, 90_000);
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sums = async (runId: string) => {
    const { attempts, nodeRuns, runs, transportTries, agentDaily } = t.db.t;
    const [att] = await t.db.q.select().from(attempts).where(eq(attempts.runId, runId));
    const [node] = await t.db.q.select().from(nodeRuns).where(eq(nodeRuns.runId, runId));
    const [run] = await t.db.q.select().from(runs).where(eq(runs.id, runId));
    const tries = await t.db.q.select().from(transportTries).where(eq(transportTries.attemptId, att!.id)).orderBy(asc(transportTries.tryNo));
    const daily = await t.db.q
      .select()
      .from(agentDaily)
      .where(and(eq(agentDaily.agent, 'sorter'), eq(agentDaily.model, `openrouter:${MODEL}`), eq(agentDaily.outcome, 'ok')));
    return {
      att: att!,
      node: node!,
      run: run!,
      tries,
      daily: daily.reduce((s, d) => ({ input: s.input + d.inputTokens, output: s.output + d.outputTokens, cost: s.cost + d.costUsd }), { input: 0, output: 0, cost: 0 }),
    };
  };

  it('a dropped answer is usage unknown with a pending try; one pass adds exactly its usage everywhere, once', async () => {
    const s = await sim();
    const runId = await cutRun(t.db, project, s, 'found');
    const before = await sums(runId);
    expect(before.att.usageUnknown).toBe(true);
    expect(before.att.inputTokens).toBe(KEPT.input);
    expect(before.tries.map((x) => [x.status, x.usageLookup, x.generationId?.startsWith('gen-sim-')])).toEqual([
      [200, 'pending', true],
      [200, null, undefined],
    ]);
    const pendingRecord = (await getRunRecord(t.db, runId))!;
    expect(pendingRecord.nodes[0]!.attempts[0]!.usageLookup).toBe('pending');
    expect(formatRun(pendingRecord)).toContain('usage unknown (lookup pending)');

    const pass = await lookUpUsage(t.db, { ...routed(s), runId });
    expect(pass).toMatchObject({ looked: 1, found: 1, gaveUp: 0, pending: 0, usage: { inputTokens: DROPPED.input, outputTokens: DROPPED.output } });
    const after = await sums(runId);
    const cost = simCost(DROPPED.input, DROPPED.output);
    for (const [b, a] of [
      [before.att, after.att],
      [before.node, after.node],
      [before.run, after.run],
    ] as const) {
      expect(a.inputTokens - b.inputTokens).toBe(DROPPED.input);
      expect(a.outputTokens - b.outputTokens).toBe(DROPPED.output);
      expect(a.costUsd - b.costUsd).toBeCloseTo(cost, 12);
    }
    expect(after.daily.input - before.daily.input).toBe(DROPPED.input);
    expect(after.daily.output - before.daily.output).toBe(DROPPED.output);
    expect(after.daily.cost - before.daily.cost).toBeCloseTo(cost, 12);
    expect(after.att.usageUnknown).toBe(false);
    expect(after.tries[0]).toMatchObject({ usageLookup: 'found', inputTokens: DROPPED.input, outputTokens: DROPPED.output });
    const record = (await getRunRecord(t.db, runId))!;
    expect(record.nodes[0]!.attempts[0]).toMatchObject({ usageUnknown: false, usageLookup: 'found' });
    expect(record.usage.inputTokens).toBe(KEPT.input + DROPPED.input);
    expect(formatRun(record)).toContain('usage found later');

    // nothing is applied twice
    expect(await lookUpUsage(t.db, { ...routed(s), runId })).toMatchObject({ looked: 0, found: 0 });
    expect((await sums(runId)).run.inputTokens).toBe(after.run.inputTokens);
  });

  it('stats not ready yet (404): pending again after a delay, then found', async () => {
    // the stats come on the second ask, whatever the clock (a time to readiness would be passed by a busy machine before the first)
    const s = await sim({ readyAfterLookups: 1 });
    const runId = await cutRun(t.db, project, s, 'not yet');
    const first = await lookUpUsage(t.db, { ...routed(s), runId });
    expect(first).toMatchObject({ looked: 1, found: 0, pending: 1 });
    expect(first.notes.join(' ')).toContain('404');
    expect(first.nextAt! - Date.now()).toBeGreaterThan(lookupDelayMs(1) - 500);
    // not due yet: nothing asked
    expect(await lookUpUsage(t.db, { ...routed(s), runId })).toMatchObject({ looked: 0, pending: 1 });
    const later = await lookUpUsage(t.db, { ...routed(s), runId, now: () => Date.now() + lookupDelayMs(1) });
    expect(later).toMatchObject({ looked: 1, found: 1, pending: 0, usage: { inputTokens: DROPPED.input } });
    expect((await sums(runId)).att.usageUnknown).toBe(false);
  });

  it(`gives up after ${MAX_LOOKUPS} lookups: the attempt stays usage unknown`, async () => {
    const s = await sim({ readyAfterMs: 24 * 3_600_000 });
    const runId = await cutRun(t.db, project, s, 'never');
    let at = Date.now();
    for (let i = 1; i < MAX_LOOKUPS; i++) {
      expect(await lookUpUsage(t.db, { ...routed(s), runId, now: () => at })).toMatchObject({ looked: 1, pending: 1, gaveUp: 0 });
      at += lookupDelayMs(i);
    }
    const last = await lookUpUsage(t.db, { ...routed(s), runId, now: () => at });
    expect(last).toMatchObject({ looked: 1, gaveUp: 1, pending: 0 });
    const after = await sums(runId);
    expect(after.tries[0]).toMatchObject({ usageLookup: 'gave_up', lookupCount: MAX_LOOKUPS, inputTokens: null });
    expect(after.att).toMatchObject({ usageUnknown: true, inputTokens: KEPT.input });
    expect((await getRunRecord(t.db, runId))!.nodes[0]!.attempts[0]!.usageLookup).toBe('gave_up');
  });

  it('a refused key (401) gives up at once, and no word of the outcome shows the key', async () => {
    const s = await sim({ key: 'sk-or-v1-the-right-one' });
    const runId = await cutRun(t.db, project, s, 'refused');
    const pass = await lookUpUsage(t.db, { ...routed(s), runId });
    expect(pass).toMatchObject({ looked: 1, gaveUp: 1, pending: 0, found: 0 });
    const said = `${describeLookups(pass, Date.now())}\n${pass.notes.join('\n')}\n${JSON.stringify(pass)}`;
    expect(said).toContain('401');
    expect(said).toContain('OPENROUTER_API_KEY');
    expect(said).not.toContain(KEY);
    expect((await sums(runId)).tries[0]!.usageLookup).toBe('gave_up');
    // the right key would have been let in: the refusal was the key's
    const right = await sim({ key: KEY });
    const runId2 = await cutRun(t.db, project, right, 'right key');
    expect(await lookUpUsage(t.db, { ...routed(right), runId: runId2 })).toMatchObject({ found: 1 });
  });

  it('a provider host outside AQVEN_PROVIDER_HOSTS is not asked: given up at once, the key never sent', async () => {
    const s = await sim();
    const runId = await cutRun(t.db, project, s, 'host refused');
    let sent = 0;
    const counting: typeof fetch = (...args) => {
      sent++;
      return fetch(...args);
    };
    vi.stubEnv('AQVEN_PROVIDER_HOSTS', 'openrouter.ai');
    try {
      const pass = await lookUpUsage(t.db, { ...routed(s), runId, fetch: counting });
      expect(pass).toMatchObject({ looked: 1, gaveUp: 1, pending: 0, found: 0 });
      expect(pass.notes.join('\n')).toContain('openrouter: its host 127.0.0.1 is not in AQVEN_PROVIDER_HOSTS: not asked');
    } finally {
      vi.unstubAllEnvs();
    }
    expect(sent).toBe(0);
    expect((await sums(runId)).tries[0]!.usageLookup).toBe('gave_up');
  });

  it('two processes looking up together apply the usage once', async () => {
    const s = await sim();
    const runId = await cutRun(t.db, project, s, 'twice');
    const before = await sums(runId);
    const other = otherProcess(t);
    try {
      const [a, b] = await Promise.all([lookUpUsage(t.db, { ...routed(s), runId }), lookUpUsage(other.db, { ...routed(s), runId })]);
      expect(a.found + b.found).toBe(1);
    } finally {
      await other.close();
    }
    const after = await sums(runId);
    expect(after.run.inputTokens - before.run.inputTokens).toBe(DROPPED.input);
    expect(after.att.inputTokens - before.att.inputTokens).toBe(DROPPED.input);
    expect(after.daily.input - before.daily.input).toBe(DROPPED.input);
  });
});
