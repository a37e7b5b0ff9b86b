// A real Prometheus scrapes AQVEN (DESIGN: Observability, "Metrics"; docs/monitoring.md): the
// dashboard's GET /metrics — its route handler behind `aqven serve`'s own server (tests never build
// the dashboard), with the process's metrics made as `aqven serve` makes them, scraped with a token
// made by --scope metrics — and a real `aqven worker --metrics-port` process, on PostgreSQL, while
// runs queued through POST /api/runs meet a 429 that pauses a model. Prometheus's HTTP API is then
// asked for the attempts counter and the pause gauge, and they are compared with what the database
// recorded. Skipped only when prometheus is not installed and this is not CI (in CI it must run:
// .ci/run installs it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '@/db/account-queries';
import type { Db } from '@/db/types';
import { processMetrics } from '@/lib/observe/process-metrics';
import { startSimulator, type SimServer } from '@/lib/sim';
import { ensureCliBuilt } from '../cli/aqven-process';
import { apiServer } from '../helpers/api-server';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { findPrometheus, PROMETHEUS_MISSING, startPrometheus, type Prometheus } from '../helpers/prometheus';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase, FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { closeDashboardAndWorker, eventually, startWorker, unfinished, type WorkerProcess } from '../queue/workers';

const PROMETHEUS = findPrometheus();
const RUNS = 4;
/** the 429's wait: long enough for several 1 s scrapes of both processes to see the pause */
const PAUSE_S = 5;

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
let tdb: TestDatabase;
let sim: SimServer;
let worker: WorkerProcess;
let serve: Awaited<ReturnType<typeof apiServer>>;
let prom: Prometheus | null = null;
let db: Db;

describe.skipIf(!PROMETHEUS && !process.env.CI)('Prometheus scraping aqven serve and a worker', () => {
  beforeAll(async () => {
    if (!PROMETHEUS) throw new Error(PROMETHEUS_MISSING);
    ensureCliBuilt();
    tdb = await testDatabase({ migrated: true });
    sim = await startSimulator({});
    const dir = copyShowcase();
    process.env.AQVEN_PROJECT = dir;
    process.env.AQVEN_SIMULATE = '1';
    process.env.AQVEN_DATABASE_URL = tdb.url;
    db = (await (await import('@/lib/server/session')).serverSession()).db;
    processMetrics(); // as `aqven serve` does as it starts
    serve = await apiServer({ serve: true });
    const token = (await createToken(db, { name: 'prometheus', role: 'viewer', createdBy: null, expiresAt: null, scope: 'metrics' }, Date.now())).token;
    worker = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 3, drainTimeout: 1, args: ['--metrics-port', '0'] });
    // its log line says where it serves them
    const workerMetrics = new URL(String(worker.lines().find((l) => typeof l.metrics === 'string')!.metrics));
    prom = await startPrometheus(PROMETHEUS, [
      { name: 'aqven-serve', target: new URL(serve.url).host, token },
      { name: 'aqven-worker', target: workerMetrics.host },
    ]);
    await eventually('both targets scraped and up', async () => (await prom!.query('up == 1')).length === 2, 60_000, 250);
  }, 180_000);

  afterAll(async () => {
    await prom?.stop();
    await serve?.close();
    await closeDashboardAndWorker({ worker, sim, tdb, restoreEnv });
  }, 60_000);

  it('counts the attempts the database recorded, and shows the pause of the model that got a 429 from both processes', async () => {
    // the first request of the first model is refused with a 429: the model pauses for PAUSE_S, cluster-wide
    sim.loadScripts({ [FLASH_LITE]: [{ kind: 'status', status: 429, headers: { 'retry-after': String(PAUSE_S) } }, { kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] });
    for (let i = 0; i < RUNS; i++) {
      const res = await fetch(`${serve.url}/api/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ flow: 'triage', input: { ticket: `ticket ${i}: my invoice is wrong` } }),
      });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    await eventually('the runs ended', async () => (await unfinished(db)) === 0, 90_000, 250);

    // what the database recorded
    const attempts = await db.q.select().from(db.t.attempts);
    const tries = await db.q.select().from(db.t.transportTries);
    const rateLimited = tries.filter((t) => t.error === 'rate_limited');
    expect(rateLimited).toHaveLength(1);
    const pausedModels = [...new Set(rateLimited.map((t) => attempts.find((a) => a.id === t.attemptId)!.model))];
    expect(pausedModels).toEqual([`openrouter:${FLASH_LITE}`]);
    const byLabels = new Map<string, number>();
    for (const a of attempts) {
      const k = [a.model.slice(a.model.indexOf(':') + 1), a.outcome, a.cause ?? 'none', a.action].join(' ');
      byLabels.set(k, (byLabels.get(k) ?? 0) + 1);
    }

    // Prometheus, once it scraped the worker after the last attempt
    const q = prom!;
    await eventually('Prometheus has every attempt', async () => (await q.query('sum(aqven_attempts_total)'))[0]?.value === attempts.length, 30_000, 250);
    const byJob = await q.query('sum by (job) (aqven_attempts_total)');
    expect(Object.fromEntries(byJob.map((s) => [s.metric.job, s.value]))).toMatchObject({ 'aqven-worker': attempts.length });
    const counted = await q.query('sum by (model, outcome, cause, action) (aqven_attempts_total)');
    expect(new Map(counted.map((s) => [[s.metric.model, s.metric.outcome, s.metric.cause, s.metric.action].join(' '), s.value]))).toEqual(byLabels);
    expect((await q.query('sum(aqven_transport_tries_total{result="rate_limited"})'))[0]?.value).toBe(rateLimited.length);
    expect((await q.query('sum(aqven_rate_limit_pauses_total)'))[0]?.value).toBe(1);
    expect((await q.query('sum(aqven_runs_total{status="succeeded"})'))[0]?.value).toBe(RUNS);

    // the pause, as each process read it from the database while it was in force: the model the 429 came from, and no other
    const paused = await q.query('max by (job, provider, model) (max_over_time(aqven_rate_limit_paused[10m]))');
    expect(paused.map((s) => `${s.metric.job} ${s.metric.provider}:${s.metric.model} ${s.value}`).sort()).toEqual(
      ['aqven-serve', 'aqven-worker'].flatMap((job) => pausedModels.map((m) => `${job} ${m} 1`)),
    );
    const left = await q.query('max(max_over_time(aqven_rate_limit_pause_remaining_seconds[10m]))');
    expect(left[0]!.value).toBeGreaterThan(0);
    expect(left[0]!.value).toBeLessThanOrEqual(PAUSE_S);
    // and the queue, read alike by both: the one live worker
    expect((await q.query('aqven_workers_live')).map((s) => `${s.metric.job} ${s.value}`).sort()).toEqual(['aqven-serve 1', 'aqven-worker 1']);
    expect((await q.query('aqven_database_up')).map((s) => s.value)).toEqual([1, 1]);
  }, 150_000);
});
