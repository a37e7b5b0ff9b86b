// What feeding the search index, the failure signatures and the daily sums costs the recorder.
//
// Method: bench/record-probe.ts (single-node runs over the zero-latency simulator, concurrency 4,
// recorded and unrecorded rounds alternating in one process) runs as a child process in this tree
// and in a checkout of the tree before the feeds (`--base DIR`, e.g. `git archive 4f3bfa3 | tar -x
// -C /tmp/aqven-base` with node_modules linked in), the two alternating — base, this, this, base, … —
// in the same session, so both see the same machine noise. Each side's medians over the pairs are
// compared: recorded runs/s, CPU ms per recorded run (the whole process, less moved by other
// tenants of a shared machine than wall time), and the run store's commits per run (the feeds add
// statements to commits, never commits). Two mixes: every answer valid (what bench/runs.bench.ts
// runs), and 10 % of answers off-schema then repaired (each a failure: signed, summed, searchable);
// each also with the run store alone (`--store`: the same runs' facts fed to the store directly),
// where the recorder's own CPU per run shows without the engine's and HTTP's share and noise.
// Without `--base` it measures this tree alone.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { writeResult } from './write-result';

const run = promisify(execFile);

interface Probe {
  runs: number;
  recordedRunsPerSec: number;
  unrecordedRunsPerSec: number;
  recordingCostRatio: number;
  recordedCpuMsPerRun: number;
  recordingCpuMsPerRun: number;
  commitsPerRun: number;
  attempts: number | null;
  searchDocs: number | null;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function probe(tree: string, args: string[]): Promise<Probe> {
  // the tree's own tsconfig resolves its `@/` imports: the probe runs with the tree as working directory
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(tree, 'bench', 'record-probe.ts'), ...args], { cwd: tree, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Probe;
}

function summary(xs: Probe[]) {
  return {
    recordedRunsPerSec: median(xs.map((x) => x.recordedRunsPerSec)),
    unrecordedRunsPerSec: median(xs.map((x) => x.unrecordedRunsPerSec)),
    recordingCostRatio: +median(xs.map((x) => x.recordingCostRatio)).toFixed(3),
    recordedCpuMsPerRun: +median(xs.map((x) => x.recordedCpuMsPerRun)).toFixed(4),
    recordingCpuMsPerRun: +median(xs.map((x) => x.recordingCpuMsPerRun)).toFixed(4),
    commitsPerRun: +median(xs.map((x) => x.commitsPerRun)).toFixed(3),
    searchDocsPerRun: xs[0]!.searchDocs === null ? null : +(xs[0]!.searchDocs / (xs[0]!.attempts ?? 1)).toFixed(3),
  };
}

export async function runRecordingCostBench(opts: { base?: string; pairs?: number; runs?: number } = {}) {
  const here = process.cwd();
  const base = opts.base && existsSync(join(opts.base, 'bench')) ? resolve(opts.base) : null;
  const pairs = opts.pairs ?? 5;
  const runs = String(opts.runs ?? 3000);
  const mixes = [
    { name: 'allValid', args: ['--runs', runs] },
    { name: 'tenPercentInvalid', args: ['--runs', runs, '--invalid', '0.1'] },
    // the store alone: the recorder's own CPU per run, without the engine's and HTTP's noise
    { name: 'storeOnly', args: ['--store', '--runs', String(Number(runs) * 3)] },
    { name: 'storeOnlyTenPercentInvalid', args: ['--store', '--runs', String(Number(runs) * 3), '--invalid', '0.1'] },
  ];
  const out: Record<string, unknown> = { pairs, runsPerProbe: Number(runs), base };
  for (const mix of mixes) {
    const mine: Probe[] = [];
    const theirs: Probe[] = [];
    for (let i = 0; i < pairs; i++) {
      // alternate which goes first: a drift in the machine's load falls on both
      if (base && i % 2 === 0) theirs.push(await probe(base, mix.args));
      mine.push(await probe(here, mix.args));
      if (base && i % 2 === 1) theirs.push(await probe(base, mix.args));
    }
    const now = summary(mine);
    const before = base ? summary(theirs) : null;
    out[mix.name] = {
      now,
      before,
      ...(before && {
        /** this tree ÷ before: below 1 is slower */
        recordedRunsPerSecRatio: +(now.recordedRunsPerSec / before.recordedRunsPerSec).toFixed(3),
        /** this tree ÷ before: above 1 is dearer */
        recordedCpuPerRunRatio: +(now.recordedCpuMsPerRun / before.recordedCpuMsPerRun).toFixed(3),
        commitsPerRunRatio: +(now.commitsPerRun / before.commitsPerRun).toFixed(3),
      }),
    };
  }
  writeResult('recording-cost', out);
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { base: { type: 'string' }, pairs: { type: 'string' }, runs: { type: 'string' } } });
  runRecordingCostBench({ base: values.base, pairs: values.pairs ? Number(values.pairs) : undefined, runs: values.runs ? Number(values.runs) : undefined }).then((r) =>
    console.log(JSON.stringify(r, null, 2)),
  );
}
