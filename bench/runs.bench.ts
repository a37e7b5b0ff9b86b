// 10,000 single-node runs against the simulator (zero latency), with full recording and with
// recording off, interleaved in rounds so both modes see the same machine noise. Reports runs/s,
// the engine+storage overhead per attempt over a raw HTTP baseline, and the recording ratio.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDb } from '@/db/client';
import { runFlow } from '@/lib/flow/run-flow';
import { routeToSimulator } from '@/lib/flow/simulate';
import { loadProject } from '@/lib/project';
import { startSimulator } from '@/lib/sim';
import { writeResult } from './write-result';
import { oneNodeProject } from './one-node-project';

async function median(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function runRunsBench(opts: { runs?: number; rounds?: number; concurrency?: number } = {}) {
  const total = opts.runs ?? 10_000;
  const rounds = opts.rounds ?? 10;
  const concurrency = opts.concurrency ?? 4;
  const dir = mkdtempSync(join(tmpdir(), 'aqven-bench-'));
  for (const [f, text] of Object.entries(oneNodeProject('bench'))) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const { project, diagnostics } = await loadProject(dir, { env: {} });
  if (!project) throw new Error(`bench project invalid: ${JSON.stringify(diagnostics)}`);
  const sim = await startSimulator();
  const { providers, env } = routeToSimulator(project, sim);
  const db = openDb(project.databasePath);
  const input = { ticket: 'I was charged twice' };

  // CPU time of the whole process (all threads, the checkpoint worker included): less moved by
  // other tenants of a shared machine than wall time, so reported beside it
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const cpuOn: number[] = [];
  const cpuOff: number[] = [];
  const batch = async (n: number, record: boolean) => {
    let next = 0;
    const c0 = cpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) {
          const r = await runFlow({ project, flow: 'one', input, providers, env, db: record ? db : null });
          if (r.status !== 'succeeded') throw new Error(`bench run failed: ${JSON.stringify(r.error)}`);
        }
      }),
    );
    (record ? cpuOn : cpuOff).push(cpuMs() - c0);
    return performance.now() - t0;
  };
  // baseline: the same HTTP exchange without the engine, same concurrency
  const body = JSON.stringify({ model: 'openai/gpt-oss-20b', messages: [{ role: 'user', content: 'Sort: I was charged twice' }] });
  const raw = async (n: number) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) {
          const res = await fetch(`${sim.baseUrl('openrouter')}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          await res.json();
        }
      }),
    );
    return performance.now() - t0;
  };

  await batch(300, true);
  await batch(300, false);
  await raw(300);
  cpuOn.length = 0;
  cpuOff.length = 0;
  sim.reset();
  const per = Math.floor(total / rounds);
  const on: number[] = [];
  const off: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < rounds; i++) {
    on.push(await batch(per, true));
    off.push(await batch(per, false));
    base.push(await raw(per));
  }
  await sim.close();
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const result = {
    runs: per * rounds,
    concurrency,
    recordedRunsPerSec: Math.round((per * rounds) / (sum(on) / 1000)),
    unrecordedRunsPerSec: Math.round((per * rounds) / (sum(off) / 1000)),
    rawHttpPerSec: Math.round((per * rounds) / (sum(base) / 1000)),
    /** wall time per run beyond the raw HTTP exchange, at this concurrency */
    overheadPerAttemptMsRecorded: +((sum(on) - sum(base)) / (per * rounds)).toFixed(4),
    overheadPerAttemptMsUnrecorded: +((sum(off) - sum(base)) / (per * rounds)).toFixed(4),
    recordingCostRatio: +(sum(on) / sum(off)).toFixed(3),
    /** the same ratio in CPU time of the process (all threads) */
    recordingCpuRatio: +(sum(cpuOn) / sum(cpuOff)).toFixed(3),
    recordingCpuMsPerRun: +((sum(cpuOn) - sum(cpuOff)) / (per * rounds)).toFixed(4),
    medianRoundRatio: +((await median(on.map((t, i) => t / off[i]!))) as number).toFixed(3),
    dbRows: (db.$client.prepare('SELECT count(*) AS n FROM attempts').get() as { n: number }).n,
    targets: { recordedRunsPerSec: '>= 500', recordingCostRatio: '< 1.30' },
  };
  writeResult('runs', result);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runRunsBench().then((r) => console.table(r));
}
