// `aqven limits`' probe over the simulator, with the showcase's declared limits (flash-lite: depth
// 5, list 40, enum 30): the search finds each limit within one level and spends no more calls than
// its budget; a call or cost budget stops it with what was measured kept (partial); an interrupted
// run is resumed the same day by a run with the same settings; every trial is an attempt of a run
// of kind `limits`, which no agent statistic or failure group counts (both dialects).
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { agentStats } from '@/db/agent-queries';
import { closeDb, openDb } from '@/db/client';
import { failureAgents, failureGroups } from '@/db/failure-queries';
import { latestModelLimits } from '@/db/limits-queries';
import type { Db } from '@/db/types';
import { systemClock } from '@/lib/engine/clock';
import { createRateGate } from '@/lib/engine/rate-gate';
import { createVirtualClock } from '@/lib/engine/virtual-clock';
import type { Clock } from '@/lib/engine/types';
import { routeToSimulator } from '@/lib/flow/simulate';
import { runFlow } from '@/lib/flow/run-flow';
import { LIMITS_AGENT, runLimitsProbe, UnknownModelError, type LimitsProbeOptions, type ProbeSession } from '@/lib/limits/probe';
import { loadProject } from '@/lib/project';
import { startSimulator, type SimServer } from '@/lib/sim';
import { DIALECTS, openTestDb, type Dialect } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';

const FLASH_LITE = 'openrouter:google/gemini-2.5-flash-lite';
const DECLARED = { depth: 5, list: 40, enum: 30 } as const;
const T0 = Date.UTC(2026, 5, 15, 9);
const at = (ms: number): Clock => ({ ...systemClock, now: () => ms });

interface LimitsWorld {
  session: ProbeSession;
  sim: SimServer;
  db: Db;
  close(): Promise<void>;
}

const open: LimitsWorld[] = [];
afterEach(async () => {
  for (const w of open.splice(0)) await w.close();
});

/** A showcase copy, a simulator playing its declared limits (no chaos, no latency), a fresh database. */
async function limitsWorld(dialect: Dialect = 'sqlite'): Promise<LimitsWorld> {
  const { project } = await loadProject(copyShowcase(), { env: {} });
  if (!project) throw new Error('showcase copy invalid');
  const sim = await startSimulator({ limits: project.simulate.limits, limitsSeed: project.simulate.seed });
  const store = dialect === 'sqlite' ? { db: openDb(project.databasePath) as Db, close: () => closeDb(project.databasePath) } : await openTestDb('pg');
  const { providers, env } = routeToSimulator(project, sim);
  const w = {
    session: { project, db: store.db, providers, env },
    sim,
    db: store.db,
    close: async () => {
      await sim.close();
      await store.close();
    },
  };
  open.push(w);
  return w;
}

const options = (o: Partial<LimitsProbeOptions> = {}): LimitsProbeOptions => ({
  model: FLASH_LITE,
  dimensions: ['depth', 'list', 'enum'],
  trials: 5,
  threshold: 0.9,
  maxCalls: 300,
  maxCostUsd: 1,
  maxTokens: 8192,
  startedBy: 'cli:test',
  clock: at(T0),
  ...o,
});

async function attemptsOf(db: Db, runId: string) {
  return db.q.select({ cause: db.t.attempts.cause, costUsd: db.t.attempts.costUsd }).from(db.t.attempts).where(eq(db.t.attempts.runId, runId));
}

describe('the limits probe against the simulator with declared limits', () => {
  it('finds each declared limit within one level, using no more calls than the budget, every call recorded', async () => {
    const w = await limitsWorld();
    const report = await runLimitsProbe(w.session, options());
    for (const d of report.dimensions) {
      expect([d.dimension, d.status, d.stoppedBy]).toEqual([d.dimension, 'complete', null]);
      expect(Math.abs(d.lastHeld! - DECLARED[d.dimension])).toBeLessThanOrEqual(1);
      expect(d.firstFailed).toBe(d.lastHeld! + 1);
    }
    expect(report.stopped).toBeNull();
    expect(report.calls).toBeLessThanOrEqual(300);
    // the enum's right value is reported apart from its validity
    const enumHeld = report.dimensions[2]!.levels.find((l) => l.level === report.dimensions[2]!.lastHeld)!;
    expect(enumHeld.correct).toBe(enumHeld.firstTryValid);

    const attempts = await attemptsOf(w.db, report.runId);
    expect(attempts).toHaveLength(report.calls);
    expect(attempts.filter((a) => a.cause === 'invalid_output').length).toBeGreaterThan(0);
    const [run] = await w.db.q.select().from(w.db.t.runs).where(eq(w.db.t.runs.id, report.runId));
    expect(run).toMatchObject({ kind: 'limits', flow: 'limits', status: 'succeeded', startedBy: 'cli:test', costUsd: report.costUsd });

    const stored = await latestModelLimits(w.db, [FLASH_LITE]);
    expect(stored.map((l) => [l.dimension, l.status, l.lastHeld, l.firstFailed, l.measuredOn, l.runId])).toEqual(
      report.dimensions.map((d) => [d.dimension, 'complete', d.lastHeld, d.firstFailed, '2026-06-15', report.runId]),
    );
    expect(stored.reduce((s, l) => s + l.calls, 0)).toBe(report.calls);
  });

  it('a call budget stops the search, spending no more than it, and keeps the levels measured (partial)', async () => {
    const w = await limitsWorld();
    const report = await runLimitsProbe(w.session, options({ maxCalls: 24 }));
    expect(report.calls).toBeLessThanOrEqual(24);
    expect(report.stopped?.reason).toBe('max_calls');
    expect(report.dimensions.map((d) => d.status)).toEqual(['partial', 'partial', 'partial']);
    const [depth] = await latestModelLimits(w.db, [FLASH_LITE]);
    // the levels measured are kept; the search had not narrowed the limit down to neighbours
    expect(depth).toMatchObject({ dimension: 'depth', status: 'partial', lastHeld: 4 });
    expect(depth!.levels.map((l) => l.level).slice(0, 2)).toEqual([4, 8]);
    expect(depth!.firstFailed! - depth!.lastHeld!).toBeGreaterThan(1);
    expect(depth!.calls).toBe(report.calls);
    // list and enum were never reached: no row claims a measurement
    expect((await latestModelLimits(w.db, [FLASH_LITE])).map((l) => l.dimension)).toEqual(['depth']);
  });

  it('the cost cap stops a run with partial results kept', async () => {
    const w = await limitsWorld();
    const first = await runLimitsProbe(w.session, options({ dimensions: ['depth'] }));
    const perCall = first.costUsd / first.calls;
    const cap = perCall * 8;
    const capped = await runLimitsProbe(w.session, options({ dimensions: ['list'], maxCostUsd: cap }));
    expect(capped.stopped?.reason).toBe('max_cost');
    expect(capped.stopped?.message).toMatch(/--max-cost/);
    // the trials in flight when the cap was reached may end: at most one wave of trials past it
    expect(capped.costUsd).toBeLessThan(cap + 4 * 2 * perCall * 2);
    const list = (await latestModelLimits(w.db, [FLASH_LITE])).find((l) => l.dimension === 'list')!;
    expect(list.status).toBe('partial');
    expect(list.levels.length).toBeGreaterThan(0);
    expect(list.levels[0]!.level).toBe(8);
    expect(list.costUsd).toBeCloseTo(capped.costUsd, 9);
  });

  it('an interrupted run keeps its levels; the same settings the same day resume them; another day starts afresh', async () => {
    const w = await limitsWorld();
    const ac = new AbortController();
    const stopped = await runLimitsProbe(
      w.session,
      options({ dimensions: ['depth'], signal: ac.signal, onProgress: (p) => (p.measured?.level === 8 ? ac.abort(new Error('stopped by SIGINT')) : undefined) }),
    );
    expect(stopped.stopped).toEqual({ reason: 'interrupted', message: 'stopped by SIGINT' });
    expect(stopped.dimensions[0]).toMatchObject({ status: 'partial', stoppedBy: 'interrupted', lastHeld: 4, firstFailed: 8 });
    const [run] = await w.db.q.select({ status: w.db.t.runs.status }).from(w.db.t.runs).where(eq(w.db.t.runs.id, stopped.runId));
    expect(run!.status).toBe('interrupted');

    const resumed = await runLimitsProbe(w.session, options({ dimensions: ['depth'], clock: at(T0 + 3_600_000) }));
    const d = resumed.dimensions[0]!;
    expect([d.status, d.resumed, d.lastHeld, d.firstFailed]).toEqual(['complete', 2, 5, 6]);
    expect(d.levels.map((l) => l.level)).toEqual([4, 8, 6, 5]);
    // only levels 6 and 5 were measured now; the row adds both runs' calls
    expect(resumed.calls).toBe(d.levels.slice(2).reduce((s, l) => s + l.calls, 0));
    expect(d.calls).toBe(stopped.calls + resumed.calls);
    expect(await latestModelLimits(w.db, [FLASH_LITE])).toHaveLength(1);

    const nextDay = await runLimitsProbe(w.session, options({ dimensions: ['depth'], clock: at(T0 + 86_400_000) }));
    expect(nextDay.dimensions[0]).toMatchObject({ resumed: 0, lastHeld: 5, firstFailed: 6 });
    expect((await latestModelLimits(w.db, [FLASH_LITE]))[0]!.measuredOn).toBe('2026-06-16');
  });

  it('a second probe of the same model and settings while one runs is refused, recorded as failed; the first is not disturbed', async () => {
    const w = await limitsWorld();
    let second: Promise<Awaited<ReturnType<typeof runLimitsProbe>>> | null = null;
    // the second starts once the first has written its first level
    const startSecond = () => {
      second ??= runLimitsProbe(w.session, options({ dimensions: ['depth'], clock: at(T0 + 12_000) }));
    };
    const first = await runLimitsProbe(w.session, options({ dimensions: ['depth'], onProgress: (p) => (p.measured ? startSecond() : undefined) }));
    const refused = await second!;
    expect(refused.stopped).toMatchObject({ reason: 'error' });
    expect(refused.stopped!.message).toMatch(
      /another aqven limits run is measuring openrouter:google\/gemini-2\.5-flash-lite depth with the same settings today \(run \w{8}, its last level written 12 s ago\)/,
    );
    expect(refused.calls).toBe(0);
    const [run] = await w.db.q.select({ status: w.db.t.runs.status, message: w.db.t.runs.errorMessage }).from(w.db.t.runs).where(eq(w.db.t.runs.id, refused.runId));
    expect(run).toMatchObject({ status: 'failed', message: refused.stopped!.message });
    expect(first.dimensions[0]).toMatchObject({ status: 'complete', lastHeld: DECLARED.depth, firstFailed: DECLARED.depth + 1 });
    expect((await latestModelLimits(w.db, [FLASH_LITE]))[0]).toMatchObject({ runId: first.runId, status: 'complete' });
  });

  it('sends every trial through the engine: a 429 is retried, failure text redacted, usage and cost recorded', async () => {
    const w = await limitsWorld();
    // scripts come before the limits: a rate limit, an answer that is no JSON (quoting an address), then ok
    w.sim.loadScripts({
      'google/gemini-2.5-flash-lite': [
        { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
        { kind: 'ok', text: 'Sure! Write to jane.doe@example.com' },
        { kind: 'ok' },
      ],
    });
    const clock = createVirtualClock(T0);
    const report = await runLimitsProbe(w.session, options({ dimensions: ['depth'], trials: 1, maxCalls: 3, clock, gate: createRateGate() }));
    expect(report.stopped?.reason).toBe('max_calls');
    const { attempts, transportTries } = w.db.t;
    const rows = await w.db.q.select().from(attempts).where(eq(attempts.runId, report.runId)).orderBy(attempts.startedAt, attempts.seq);
    expect(rows.map((a) => [a.seq, a.outcome, a.cause, a.action])).toEqual([
      [1, 'ok', 'invalid_output', 'repair'],
      [2, 'ok', null, 'none'],
    ]);
    const tries = await w.db.q.select().from(transportTries).where(eq(transportTries.attemptId, rows[0]!.id));
    expect(tries.map((t) => t.status)).toEqual([429, 200]);
    expect(clock.sleeps).toContain(1000);
    expect(rows[0]!.errorDetail).toContain('<EMAIL>');
    expect(JSON.stringify(rows)).not.toContain('jane.doe@example.com');
    expect(rows.every((a) => a.inputTokens > 0 && a.costUsd > 0)).toBe(true);
    // the level: first answer invalid, valid after one repair
    expect(report.dimensions[0]!.levels[0]).toMatchObject({ level: 4, trials: 1, firstTryValid: 0, afterRepairValid: 1, calls: 2 });
  });

  it('counts truncated answers apart: a level is judged over the rest; a level of nothing but truncations decides nothing and is not stored', async () => {
    const w = await limitsWorld();
    w.sim.loadScripts({ 'google/gemini-2.5-flash-lite': [{ kind: 'truncated' }, { kind: 'ok' }] });
    const some = await runLimitsProbe(w.session, options({ dimensions: ['depth'], maxCalls: 10 }));
    expect(some.dimensions[0]!.levels[0]).toMatchObject({ level: 4, trials: 5, truncated: 1, firstTryValid: 4, held: true, firstTry: { value: 1 } });

    w.sim.loadScripts({ 'google/gemini-2.5-flash-lite': [{ kind: 'truncated' }] });
    const none = await runLimitsProbe(w.session, options({ dimensions: ['list'] }));
    expect(none.stopped?.reason).toBe('undecided');
    expect(none.stopped?.message).toMatch(/^no answer at list level 8 could be judged \(5 truncated, 0 errors\); raise --max-tokens or check the provider$/);
    expect(none.dimensions[0]).toMatchObject({ status: 'partial', stoppedBy: 'undecided', lastHeld: null, firstFailed: null });
    expect(none.dimensions[0]!.levels).toMatchObject([{ level: 8, truncated: 5, held: null }]);
    const list = (await latestModelLimits(w.db, [FLASH_LITE])).find((l) => l.dimension === 'list')!;
    expect([list.status, list.levels, list.calls]).toEqual(['partial', [], 5]);
  });

  it('refuses a model the project does not use, naming the ones its agents use, before writing anything', async () => {
    const w = await limitsWorld();
    const err = await runLimitsProbe(w.session, options({ model: 'openrouter:nope/model' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownModelError);
    expect((err as Error).message).toBe(
      'openrouter:nope/model is not a model of this project; its agents use ' +
        [...new Set(Object.values(w.session.project.agents).flatMap((a) => [a.model, ...a.fallbackModels]))].join(', '),
    );
    expect(await w.db.q.select().from(w.db.t.runs)).toEqual([]);
  });
});

describe.each(DIALECTS)('limits runs and the statistics, on %s', (dialect) => {
  it('stay out of agent statistics and failure groups, though their trials fail', async () => {
    const w = await limitsWorld(dialect);
    const flow = await runFlow({
      project: w.session.project,
      flow: 'triage',
      input: { ticket: 'I was charged twice' },
      providers: w.session.providers,
      env: w.session.env,
      db: w.db,
    });
    expect(flow.status).toBe('succeeded');
    const before = await agentStats(w.db);

    const report = await runLimitsProbe(w.session, options({ dimensions: ['depth'] }));
    const failed = (await attemptsOf(w.db, report.runId)).filter((a) => a.cause === 'invalid_output');
    expect(failed.length).toBeGreaterThan(0);

    const after = await agentStats(w.db);
    expect(after).toEqual(before);
    expect(after.map((s) => s.agent)).not.toContain(LIMITS_AGENT);
    expect(await failureGroups(w.db, { since: 0 })).toEqual([]);
    expect(await failureAgents(w.db, 0)).toEqual([]);
    const daily = await w.db.q.select({ agent: w.db.t.agentDaily.agent }).from(w.db.t.agentDaily);
    expect(daily.length).toBeGreaterThan(0);
    expect(daily.map((r) => r.agent)).not.toContain(LIMITS_AGENT);
  });
});
