// What a recorded run writes to SQLite's WAL, by b-tree, and what each frame costs this machine in
// system calls (DESIGN §18; docs/measurements.md, "Issue 30: what a recorded run writes").
//
//   npx tsx bench/wal-frames.ts [--warm 3000] [--runs 400] [--drop-indexes a,b] [--no-autoincrement]
//
// Single-node runs over the in-process simulator, 4 at a time, recorded as `aqven run` records
// them (runFlow, the product's run store and checkpointer). `--warm` runs first give the tables a
// history's size; then a reader transaction on a second connection pins the WAL (no checkpoint may
// start it over), `--runs` more runs are recorded, and the WAL's frames from the pin on are read
// (bench/wal-file.ts) and put to the b-trees `dbstat` says own their pages. SQLite writes a frame as
// two `pwrite`s, its 24-byte header and its page; the same two writes are timed on a scratch file
// beside the database, so frames per run × µs per frame is what those writes cost a run's thread.
// `--drop-indexes` and `--no-autoincrement` measure schema variants (bench/probe-setup.ts). Writes
// bench/results/wal-frames.json.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { closeDb } from '@/db/client';
import { runFlow } from '@/lib/flow/run-flow';
import { spread } from './peers/metrics';
import { dropIndexes, probeProject, withoutAutoincrement } from './probe-setup';
import { framesByTree, pageOwners, walFrames } from './wal-file';
import { writeResult } from './write-result';

const { values } = parseArgs({
  options: {
    warm: { type: 'string', default: '3000' },
    runs: { type: 'string', default: '400' },
    'drop-indexes': { type: 'string' },
    'no-autoincrement': { type: 'boolean' },
  },
});
const count = (name: 'warm' | 'runs') => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: a whole number of runs, at least 1 (got "${values[name]}")`);
  return n;
};
const warm = count('warm');
const runs = count('runs');
const dropped = (values['drop-indexes'] ?? '').split(',').filter(Boolean);
const CONCURRENCY = 4;

const { dir, project, sim, providers, env, db } = await probeProject('wal-frames');
const path = project.databasePath;
dropIndexes(db.$client, dropped);
if (values['no-autoincrement']) withoutAutoincrement(db.$client);

const input = { ticket: 'I was charged twice for my subscription renewal in March' };
const record = async (n: number) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await runFlow({ project, flow: 'one', input, providers, env, db });
    }),
  );
};

/** the median µs of wall and CPU time one frame's two writes take, over `n` frames */
function frameWriteCost(pageSize: number, n = 20_000) {
  const file = join(dir, 'frame-cost.bin');
  const fd = openSync(file, 'w');
  const header = Buffer.alloc(24, 1);
  const page = Buffer.alloc(pageSize, 2);
  const perBatch = n / 10;
  const samples: { wall: number; cpu: number }[] = [];
  try {
    for (let batch = 0; batch < 10; batch++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0, pos = 0; i < perBatch; i++, pos += header.length + page.length) {
        writeSync(fd, header, 0, header.length, pos);
        writeSync(fd, page, 0, page.length, pos + header.length);
      }
      const c = process.cpuUsage(c0);
      samples.push({ wall: ((performance.now() - t0) * 1000) / perBatch, cpu: (c.user + c.system) / perBatch });
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const median = (xs: number[]) => +spread(xs).median.toFixed(2);
  return { wallUs: median(samples.map((s) => s.wall)), cpuUs: median(samples.map((s) => s.cpu)) };
}

await record(warm);
await record(1); // at least one frame in the WAL, so the reader below holds a place in it
const reader = new Database(path, { readonly: true });
reader.exec('BEGIN');
reader.prepare('SELECT count(*) FROM runs').get(); // the read starts here: no checkpoint starts the WAL over past it
const from = walFrames(readFileSync(`${path}-wal`)).frames.length;
const c0 = process.cpuUsage();
await record(runs);
const cpuMsPerRun = (() => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / runs;
})();
const wal = walFrames(readFileSync(`${path}-wal`));
reader.exec('COMMIT');
reader.close();
// the reader held the WAL: had it been started over anyway, the frames before `from` would be others
if (wal.frames.length < from) throw new Error('wal-frames: the WAL was started over while it was pinned; nothing measured');
const frames = wal.frames.slice(from);
const commits = frames.filter((f) => f.commit).length;
const byTree = framesByTree(frames, pageOwners(db.$client));
const cost = frameWriteCost(wal.pageSize);
await sim.close();
await closeDb(path);
rmSync(dir, { recursive: true, force: true });

const perRun = (n: number) => +(n / runs).toFixed(2);
const result = {
  warm,
  runs,
  droppedIndexes: dropped,
  autoincrement: !values['no-autoincrement'],
  framesPerRun: perRun(frames.length),
  commitsPerRun: perRun(commits),
  framesPerCommit: +(frames.length / Math.max(commits, 1)).toFixed(1),
  pageSize: wal.pageSize,
  frameWrite: cost,
  frameWritesUsPerRun: +((frames.length / runs) * cost.cpuUs).toFixed(1),
  recordedCpuMsPerRun: +cpuMsPerRun.toFixed(3),
  byTree: Object.fromEntries(byTree.map(([name, n]) => [name, perRun(n)])),
};
console.log(
  `${runs} recorded runs after ${warm}: ${result.framesPerRun} WAL frames and ${result.commitsPerRun} commits per run (${result.framesPerCommit} frames per commit); ` +
    `a frame's two writes ${cost.wallUs} µs wall, ${cost.cpuUs} µs CPU here: ${result.frameWritesUsPerRun} µs of CPU per run; the whole run ${result.recordedCpuMsPerRun} CPU ms`,
);
for (const [name, n] of byTree) console.log(`${(n / runs).toFixed(2).padStart(6)}  ${name}`);
console.log(JSON.stringify(result));
writeResult('wal-frames', result);
