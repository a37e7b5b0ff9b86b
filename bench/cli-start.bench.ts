// Start-up of the `aqven` command as a user meets it: real processes spawned through bin/aqven.mjs,
// interleaved with a bare `node -e 0` in every round so each figure is also a ratio against node's
// own start on the same machine at the same moment. Targets (DESIGN: CLI): `aqven --version` ≤ 4× bare
// node; the first provider request of a one-node `aqven run` ≤ 0.5 s after the process is spawned.
// The old launcher (tsx transpiling lib/cli/main.ts at every start) is measured beside it for reference.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startSimulator } from '@/lib/sim';
import { writeResult } from './write-result';
import { oneNodeProject } from './one-node-project';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'aqven.mjs');

interface Spawned {
  /** Date.now() just before the spawn: the clock the simulator stamps arrivals with */
  spawnedAt: number;
  ms: number;
  code: number | null;
  out: string;
  err: string;
}

function spawnTimed(args: string[], env: NodeJS.ProcessEnv, cwd = tmpdir()): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const spawnedAt = Date.now();
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ spawnedAt, ms: performance.now() - t0, code, out, err }));
  });
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const quantile = (xs: number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function summary(ms: number[], nodeMs: number[]) {
  // each round's time over that same round's bare node start
  const ratios = ms.map((m, i) => m / nodeMs[i]!);
  return {
    medianMs: round(quantile(ms, 0.5), 1),
    p90Ms: round(quantile(ms, 0.9), 1),
    ratioMedian: round(quantile(ratios, 0.5)),
    ratioP90: round(quantile(ratios, 0.9)),
  };
}

export async function runCliStartBench(opts: { reps?: number; reference?: boolean } = {}) {
  const reps = opts.reps ?? 15;
  const reference = opts.reference ?? true;
  const sim = await startSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'aqven-cli-start-'));
  const files = {
    ...oneNodeProject('cli-start'),
    // the real HTTP transport, pointed at a simulator in this process: its log stamps each arrival
    'providers/openrouter.yaml': `apiVersion: "aqven/v1"\nkind: "Provider"\nbase_url: "${sim.baseUrl('openrouter')}"\ntransport: { max_attempts: 1 }\n`,
  };
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const env = { ...process.env, NODE_OPTIONS: undefined, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined, OPENROUTER_API_KEY: 'bench' };
  const input = '{"ticket":"I was charged twice"}';
  const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');

  const cases: Record<string, () => Promise<Spawned>> = {
    node: () => spawnTimed(['-e', '0'], env),
    version: () => spawnTimed([BIN, '--version'], env),
    check: () => spawnTimed([BIN, 'check', '--project', dir], env),
    run: () => spawnTimed([BIN, 'run', 'one', '--project', dir, '--input', input], env),
    runSimulate: () => spawnTimed([BIN, 'run', 'one', '--simulate', '--json', '--project', dir, '--input', input], env),
    ...(reference
      ? {
          // the old launcher starts only inside the checkout: tsx finds the `@/` alias in ./tsconfig.json
          tsxVersion: () => spawnTimed([tsxCli, join(ROOT, 'lib/cli/main.ts'), '--version'], env, ROOT),
          tsxCheck: () => spawnTimed([tsxCli, join(ROOT, 'lib/cli/main.ts'), 'check', '--project', dir], env, ROOT),
        }
      : {}),
  };
  const names = Object.keys(cases);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const firstRequestMs: number[] = [];
  const simulateRunStartMs: number[] = [];

  // one untimed round: builds dist/cli if a source changed, creates the database, warms the file cache
  for (const n of names) {
    const r = await cases[n]!();
    if (r.code !== 0) throw new Error(`cli-start bench: ${n} exited ${r.code}\n${r.err}`);
  }
  for (let rep = 0; rep < reps; rep++) {
    // a different order each round, so no case always follows the same neighbour
    const order = names.map((_, i) => names[(i + rep) % names.length]!);
    for (const n of order) {
      const r = await cases[n]!();
      if (r.code !== 0) throw new Error(`cli-start bench: ${n} exited ${r.code}\n${r.err}`);
      times[n]!.push(r.ms);
      if (n === 'run') {
        const arrivals = sim
          .requests()
          .filter((q) => q.arrivedAt >= r.spawnedAt)
          .map((q) => q.arrivedAt);
        if (!arrivals.length) throw new Error('cli-start bench: the run made no provider request');
        firstRequestMs.push(Math.min(...arrivals) - r.spawnedAt);
      }
      if (n === 'runSimulate') simulateRunStartMs.push(Date.parse(JSON.parse(r.out).startedAt) - r.spawnedAt);
    }
    sim.reset();
  }
  await sim.close();
  rmSync(dir, { recursive: true, force: true });

  const node = times.node!;
  const version = summary(times.version!, node);
  const firstRequest = summary(firstRequestMs, node);
  const result = {
    reps,
    nodeMs: { medianMs: round(quantile(node, 0.5), 1), p90Ms: round(quantile(node, 0.9), 1) },
    version: { ...version, targetRatio: 4, pass: version.ratioMedian <= 4 },
    check: summary(times.check!, node),
    run: summary(times.run!, node),
    firstRequest: {
      ...firstRequest,
      targetMs: 500,
      pass: firstRequest.medianMs <= 500,
      note: 'spawn of `aqven run` to the arrival of its first provider request at a loopback simulator',
    },
    simulateRunStart: {
      ...summary(simulateRunStartMs, node),
      note: 'spawn of `aqven run --simulate` to the run record startedAt (in-process simulator started)',
    },
    ...(reference
      ? {
          reference: {
            tsxVersion: summary(times.tsxVersion!, node),
            tsxCheck: summary(times.tsxCheck!, node),
            note: 'lib/cli/main.ts through tsx, as the old bin ran it (the old bin added one more node process in front)',
          },
        }
      : {}),
  };
  writeResult('cli-start', result);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runCliStartBench().then((r) => console.log(JSON.stringify(r, null, 2)));
}
