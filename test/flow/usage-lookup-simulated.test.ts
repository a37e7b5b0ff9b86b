// A simulated run's cut-off answers are looked up by the command that ran it, from its simulator,
// and by no later process (DESIGN: Usage unknown, never zero, "Looked up afterwards"): what that one
// pass cannot find is given up then, so a later `aqven runs reconcile` never asks a real provider —
// or another simulator, which refuses ids it did not make — about them. A run on real
// providers keeps the ordinary rule: asked again later. Over the simulator, on both dialects.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import { runFlow } from '@/lib/flow/run-flow';
import { lookUpRunNow, lookUpUsage } from '@/lib/flow/usage-lookup';
import { loadProject, type Project } from '@/lib/project';
import { startSimulator } from '@/lib/sim';
import type { SimGenerationOptions, SimServer } from '@/lib/sim/types';
import { oneNodeProject } from '../../bench/one-node-project';
import { DIALECTS, openTestDb, type TestDb } from '../helpers/dialects';

const MODEL = 'openai/gpt-oss-20b';
const KEY = 'sk-or-v1-simulated-lookup-1234';

describe.each(DIALECTS)('the lookups of a simulated run end with its command, on %s', (dialect) => {
  let t: TestDb;
  let dir: string;
  let project: Project;
  const sims: SimServer[] = [];

  /** the project's providers on a fresh simulator, and a run on it whose first reply is dropped mid-body after its headers */
  async function cutRun(generations: SimGenerationOptions | undefined, label: string) {
    const sim = await startSimulator({
      generations,
      scripts: { [MODEL]: [{ kind: 'drop', when: 'during_body', usage: { input: 120, output: 30, thoughts: 0 } }, { kind: 'ok' }] },
    });
    sims.push(sim);
    const base = project.providers.openrouter!;
    const providers = {
      ...project.providers,
      openrouter: { ...base, baseUrl: sim.baseUrl('openrouter'), transport: { ...base.transport, backoff: { baseMs: 1, factor: 1, capMs: 1, jitter: 0 } } },
    };
    const env = { OPENROUTER_API_KEY: KEY };
    const r = await runFlow({ project, flow: 'one', input: { ticket: label }, providers, env, db: t.db });
    return { runId: r.id, providers, env };
  }
  const lookups = async (db: Db, runId: string) => {
    const { attempts, transportTries } = db.t;
    const ids = (await db.q.select({ id: attempts.id }).from(attempts).where(eq(attempts.runId, runId))).map((a) => a.id);
    return (await db.q.select({ state: transportTries.usageLookup }).from(transportTries).where(inArray(transportTries.attemptId, ids)).orderBy(asc(transportTries.id)))
      .map((x) => x.state)
      .filter((s) => s !== null);
  };

  beforeAll(async () => {
    t = await openTestDb(dialect);
    dir = mkdtempSync(join(tmpdir(), 'aqven-sim-lookup-'));
    for (const [f, text] of Object.entries(oneNodeProject('simlookup', { model: MODEL }))) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    project = (await loadProject(dir, { env: {} })).project!;
  }, 90_000);
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('its simulator answers the one pass; what it cannot answer is given up then, and no later pass asks anyone', async () => {
    const found = await cutRun(undefined, 'found');
    expect(await lookUpRunNow(t.db, { ...found, simulated: true })).toMatchObject({ looked: 1, found: 1, gaveUp: 0, pending: 0 });
    expect(await lookups(t.db, found.runId)).toEqual(['found']);

    // the simulator has no stats for it yet (it would, past the command's end: nobody could ask it then)
    const unanswered = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'not ready');
    const pass = await lookUpRunNow(t.db, { ...unanswered, simulated: true });
    expect(pass).toMatchObject({ looked: 1, found: 0, gaveUp: 1, pending: 0, nextAt: null });
    expect(pass.notes.join('\n')).toContain('1 lookup of a simulated run given up');
    expect(await lookups(t.db, unanswered.runId)).toEqual(['gave_up']);
    // a later `aqven runs reconcile`, due or not: nothing of that run is left to ask about
    let asked = 0;
    const later = await lookUpUsage(t.db, { ...unanswered, now: () => Date.now() + 3_600_000, fetch: async () => (asked++, new Response('{}', { status: 404 })) });
    expect([later.looked, later.pending, asked]).toEqual([0, 0, 0]);
  });

  it("a simulated process asks its simulator about its own generations only: another simulator's is given up at once, a real provider's left pending", async () => {
    const earlier = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'an earlier simulator');
    const real = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'a real provider');
    // as a real provider would name it (OpenRouter's ids are no simulator's)
    const { attempts, transportTries } = t.db.t;
    const realAttempts = (await t.db.q.select({ id: attempts.id }).from(attempts).where(eq(attempts.runId, real.runId))).map((a) => a.id);
    await t.db.q.update(transportTries).set({ generationId: 'gen-1764590400-AbCdEfGhIjKlMnOp' }).where(inArray(transportTries.attemptId, realAttempts));
    // a later simulated session: its own, fresh simulator (its first generation has the earlier one's number)
    const now = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'this simulator');
    const pass = await lookUpUsage(t.db, { providers: now.providers, env: now.env, simulated: true });
    expect(await lookups(t.db, earlier.runId)).toEqual(['gave_up']); // another simulator's: refused, never matched by its number
    expect(pass.notes.join('\n')).toContain('HTTP 400 to the generation lookup');
    expect(await lookups(t.db, real.runId)).toEqual(['pending']); // not asked: for a process with the real providers
    expect(await lookups(t.db, now.runId)).toEqual(['pending']); // its own: asked, not ready yet
  });

  it("a real process gives a simulator's leftover up at once on a real provider's host, and still asks a simulator standing in through base_url", async () => {
    // a simulated dashboard stopped with this lookup pending: a process with the real providers comes next
    const left = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'a stopped dashboard');
    const asked: string[] = [];
    const fetch = async (url: string | URL | Request) => (asked.push(String(url)), new Response('{}', { status: 404 }));
    const real = { ...left.providers, openrouter: { ...left.providers.openrouter!, baseUrl: 'https://openrouter.ai/api/v1' } };
    const pass = await lookUpUsage(t.db, { providers: real, env: left.env, runId: left.runId, fetch });
    expect(pass).toMatchObject({ looked: 1, gaveUp: 1, pending: 0 });
    expect(asked).toEqual([]); // openrouter.ai was never asked about an id it did not make
    expect(pass.notes.join('\n')).toMatch(/generation gen-sim-[0-9a-f]{8}-\d+ was made by AQVEN's simulator, not by openrouter\.ai/);
    expect(await lookups(t.db, left.runId)).toEqual(['gave_up']);

    // a project whose provider is the simulator (base_url): its generations are asked there, as any provider's
    const standIn = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'a simulator as the provider');
    const again = await lookUpUsage(t.db, { providers: standIn.providers, env: standIn.env, runId: standIn.runId, fetch });
    expect(again).toMatchObject({ looked: 1, gaveUp: 0, pending: 1 });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('/generation?id=gen-sim-');
  });

  it('a run on real providers keeps its pending lookup for a later pass', async () => {
    const real = await cutRun({ readyAfterMs: 24 * 3_600_000 }, 'real');
    expect(await lookUpRunNow(t.db, { ...real, simulated: false })).toMatchObject({ looked: 1, gaveUp: 0, pending: 1 });
    expect(await lookups(t.db, real.runId)).toEqual(['pending']);
  });
});
