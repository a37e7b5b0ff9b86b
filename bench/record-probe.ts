// One measurement of what recording costs, for bench/recording-cost.bench.ts: single-node runs over
// the simulator (zero latency) at concurrency 4, recorded and unrecorded in alternating rounds, in
// this process. Uses only what every version of the tree since the run store has (openDb, runFlow,
// the simulator, runStore), so the same file runs in an older checkout too. Prints one JSON line.
// `--store`: the run store alone, fed the facts of the same runs without engine or HTTP (the
// recorder's own CPU per run, far less moved by a busy machine than a whole run), with ids made as
// the product makes them (time-ordered, UUID v7; `--ids v4` for random ones, as before), and the
// bytes the process wrote per run (the WAL and the checkpoints into the file; Linux only).
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { v7 } from 'uuid';
import { closeDb } from '@/db/client';
import { runStore } from '@/db/run-store';
import { runFlow } from '@/lib/flow/run-flow';
import { probeProject, withoutAutoincrement } from './probe-setup';
import { countCommits, runFacts } from './store-facts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    rounds: { type: 'string' },
    invalid: { type: 'string' },
    store: { type: 'boolean' },
    ids: { type: 'string' },
    'no-autoincrement': { type: 'boolean' },
  },
});
const total = Number(values.runs ?? 3000);
const rounds = Number(values.rounds ?? 3);
/** the share of answers that fail the output schema (each then repaired): the failure feeds' cost */
const invalid = Number(values.invalid ?? 0);
const concurrency = 4;

const { dir, project, sim, providers, env, db } = await probeProject('probe');
if (invalid > 0) sim.setChaos({ seed: 7, invalid });
// `--no-autoincrement`: search_docs without AUTOINCREMENT (bench/probe-setup.ts)
if (values['no-autoincrement']) withoutAutoincrement(db.$client);

const commits = countCommits(db);

// the statements the store runs (writes and reads): a count of its work the machine's load does not move
let statements = 0;
const client = db.$client as unknown as { prepare: (sql: string) => Record<string, unknown> };
const prepare = client.prepare.bind(client);
client.prepare = (sql) => {
  const st = prepare(sql);
  for (const m of ['run', 'get'] as const) {
    const f = st[m] as ((...a: unknown[]) => unknown) | undefined;
    if (f) st[m] = (...a: unknown[]) => (statements++, f.apply(st, a));
  }
  return st;
};

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const input = { ticket: 'I was charged twice for my subscription renewal in March' };
const batch = async (n: number, record: boolean) => {
  let next = 0;
  const c0 = cpuMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) await runFlow({ project, flow: 'one', input, providers, env, db: record ? db : null });
    }),
  );
  return { ms: performance.now() - t0, cpu: cpuMs() - c0 };
};

/** the probe's project and database go with it */
const done = async () => {
  await closeDb(project.databasePath);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
if (values.store) {
  await storeOnly();
  await done();
}

await batch(300, true);
await batch(300, false);
commits.count = 0;
statements = 0;
const per = Math.floor(total / rounds);
const on = { ms: 0, cpu: 0 };
const off = { ms: 0, cpu: 0 };
for (let i = 0; i < rounds; i++) {
  const a = await batch(per, true);
  const b = await batch(per, false);
  on.ms += a.ms;
  on.cpu += a.cpu;
  off.ms += b.ms;
  off.cpu += b.cpu;
}
const runs = per * rounds;
const count = (table: string) => {
  try {
    return (db.$client.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } catch {
    return null; // a tree before the table existed
  }
};
await sim.close();
console.log(
  JSON.stringify({
    runs,
    recordedRunsPerSec: Math.round(runs / (on.ms / 1000)),
    unrecordedRunsPerSec: Math.round(runs / (off.ms / 1000)),
    recordingCostRatio: +(on.ms / off.ms).toFixed(3),
    recordedCpuMsPerRun: +(on.cpu / runs).toFixed(4),
    recordingCpuMsPerRun: +((on.cpu - off.cpu) / runs).toFixed(4),
    commitsPerRun: +(commits.count / runs).toFixed(3),
    statementsPerRun: +(statements / runs).toFixed(2),
    attempts: count('attempts'),
    searchDocs: count('search_docs'),
  }),
);
await done();

/** The facts of single-node runs fed to the run store directly, 4 runs at a time as the engine would (one of every `1 / invalid` answers off-schema, then repaired). */
async function storeOnly() {
  const store = runStore(db);
  let seq = 0;
  const oneFacts = runFacts(store, { newId: values.ids === 'v4' ? randomUUID : v7, invalid });
  const oneRun = () => oneFacts(seq++);
  const rounds = async (n: number) => {
    let next = 0;
    const c0 = cpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await oneRun();
      }),
    );
    return { ms: performance.now() - t0, cpu: cpuMs() - c0 };
  };
  await rounds(500);
  commits.count = 0;
  const written = () => {
    try {
      return Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
    } catch {
      return NaN; // not Linux
    }
  };
  const w0 = written();
  const r = await rounds(total);
  const kbPerRun = (written() - w0) / total / 1024;
  console.log(
    JSON.stringify({
      runs: total,
      recordedRunsPerSec: Math.round(total / (r.ms / 1000)),
      unrecordedRunsPerSec: 0,
      recordingCostRatio: 0,
      recordedCpuMsPerRun: +(r.cpu / total).toFixed(4),
      recordingCpuMsPerRun: +(r.cpu / total).toFixed(4),
      commitsPerRun: +(commits.count / total).toFixed(3),
      ids: values.ids === 'v4' ? 'v4' : 'v7',
      autoincrement: !values['no-autoincrement'],
      kbWrittenPerRun: Number.isNaN(kbPerRun) ? null : +kbPerRun.toFixed(1),
      attempts: null,
      searchDocs: null,
    }),
  );
  await sim.close();
}
