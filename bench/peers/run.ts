// `npm run bench:peers` (also run by `npm run bench`): AQVEN side by side with the SDKs users would
// pick instead, against one fake provider — the simulator playing keyed workloads (workloads.ts) —
// each contender in a process of its own. Writes bench/results/peers.json and the README table
// between <!-- peers:begin --> and <!-- peers:end -->. Exits 1 when AQVEN accepts a bad answer
// (W2) or sends more than one request per 429 pause (W1).
//
//   npx tsx bench/peers/run.ts [--quick] [--reps N] [--no-readme] [--w4-only] [--only aqven-recorded,openai-parse] [--cpu-prof DIR] [--writer-thread]
import { fork, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROVIDER_DEFAULTS } from '@/lib/project/builtin-providers';
import { startSimulator } from '@/lib/sim';
import { keyedWorkload, type KeyedLogEntry } from '@/lib/sim/workload';
import { writeResult } from '../write-result';
import type { CallResult, ContenderKind, FromContender, ToContender } from './contender';
import { spread, w1Figures, w2Figures, w3Figures, type PauseRule, type W1Figures, type W2Figures, type W3Figures } from './metrics';
import { bundleContender, ROOT } from './bundle';
import { evaluateTargets, renderTable, w1ToFloor, writeReadmeTable, type PeersResult } from './table';
import { w1, w2, w3, w4, W1_RETRY_AFTER_S, W1_WINDOW_MS, GOOD, MODEL, type Workload } from './workloads';

const here = dirname(fileURLToPath(import.meta.url));
/** how a contender process starts: the esbuild bundle (bundle.ts), else contender.ts under tsx */
let contenderEntry = { file: join(here, 'contender.ts'), execArgv: ['--import', 'tsx'] };

/**
 * Calls each W4 contender makes before it is measured. 200 were too few: V8 was still tiering the
 * code up through the first repetition, which then cost every contender about twice the CPU per
 * call of the later ones (AQVEN alone 0.81 against 0.26–0.31 ms); after 2,000 it is 0.33.
 */
const W4_WARM_UP_CALLS = 2000;
/** AQVEN's default max_concurrency: the cap on its first burst */
const AQVEN_MAX_CONCURRENCY = PROVIDER_DEFAULTS.maxConcurrency;
export const FAULT_CONTENDERS: ContenderKind[] = ['ai-generateObject', 'ai-generateText', 'openai-parse', 'aqven-recorded'];
/** W1 alone: a bare client doing only AQVEN's rate-limit rule (contender.ts, ruleFloorCall), the least that rule costs */
export const W1_FLOOR: ContenderKind = 'rule-floor';
/** every contender of W1–W3 (the floor plays W1 only): what `--only` may name */
const W1_W3_CONTENDERS: ContenderKind[] = [...FAULT_CONTENDERS, W1_FLOOR];
export const W4_CONTENDERS: ContenderKind[] = ['fetch', 'ai-generateObject', 'ai-generateText', 'openai-parse', 'aqven', 'aqven-recorded'];
/** AQVEN recording through bench/writer-thread-store.ts (its SQLite writer on a worker thread): `--writer-thread` adds it to W4, `--only` may name it */
export const WRITER_THREAD: ContenderKind = 'aqven-writer-thread';
const ONLY_CHOICES: ContenderKind[] = [...W1_W3_CONTENDERS, WRITER_THREAD];

interface Contender {
  kind: ContenderKind;
  run(calls: number, concurrency: number, perCall: boolean): Promise<Extract<FromContender, { type: 'result' }>>;
  close(): Promise<void>;
}

async function spawnContender(kind: ContenderKind, baseUrl: string): Promise<Contender> {
  const child: ChildProcess = fork(contenderEntry.file, [kind, baseUrl], {
    execArgv: contenderEntry.execArgv,
    // the bundle finds the migrations through AQVEN_ROOT, not beside itself
    env: { ...process.env, AQVEN_ROOT: ROOT },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (m: FromContender) => void>();
  let onReady: (() => void) | undefined;
  let failedStart: ((e: Error) => void) | undefined;
  child.on('message', (m: FromContender) => {
    if (m.type === 'ready') onReady?.();
    else waiting.get(m.id)?.(m);
  });
  const exited = new Promise<void>((res) =>
    child.once('exit', (code) => {
      failedStart?.(new Error(`contender ${kind} exited with ${code} before it was ready`));
      for (const w of waiting.values()) w({ type: 'failed', id: -1, message: `contender ${kind} exited with ${code}` });
      res();
    }),
  );
  await new Promise<void>((res, rej) => {
    onReady = res;
    failedStart = rej;
  });
  failedStart = undefined;
  let id = 0;
  return {
    kind,
    run(calls, concurrency, perCall) {
      const msg: ToContender = { type: 'run', id: ++id, calls, concurrency, perCall };
      return new Promise((res, rej) => {
        waiting.set(msg.id, (m) => {
          waiting.delete(msg.id);
          if (m.type === 'result') res(m);
          else rej(new Error(`${kind}: ${m.type === 'failed' ? m.message : 'unexpected message'}`));
        });
        child.send(msg);
      });
    },
    async close() {
      if (child.connected) child.send({ type: 'exit' } satisfies ToContender);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Prepared {
  kind: ContenderKind;
  w: Workload;
  play(): Promise<{ log: readonly KeyedLogEntry[]; startedAt: number; result: Extract<FromContender, { type: 'result' }> }>;
  /** ends the process and the fake (after play, or instead of it) */
  discard(): Promise<void>;
}

/**
 * One contender in a fresh process against a fresh fake playing `w`, started but not yet run:
 * processes are started ahead, a few at a time, so their start-up is not paid one by one — an idle
 * contender waits on its IPC channel and costs nothing while another one is measured.
 */
async function prepare(kind: ContenderKind, w: Workload): Promise<Prepared> {
  const wl = keyedWorkload(w.schedule);
  const sim = await startSimulator({ workload: wl, logLimit: 100 });
  let c: Contender;
  try {
    c = await spawnContender(kind, sim.baseUrl('openrouter'));
  } catch (e) {
    await sim.close();
    throw e;
  }
  const discard = async () => {
    await c.close();
    await sim.close();
  };
  return {
    kind,
    w,
    async play() {
      try {
        const r = await c.run(w.calls, w.concurrency, true);
        return { log: wl.log, startedAt: wl.startedAt ?? r.startedAt, result: r };
      } finally {
        await discard();
      }
    },
    discard,
  };
}

/** One repetition's W1 figures, as the progress lines print them. */
function w1Line(f: W1Figures): string {
  return (
    `W1 ${f.requests} req, ${f.rateLimited} 429, first ok ${Math.round(f.firstOkMs)} ms (the next request +${f.releaseFirstMs.toFixed(1)} ms, the last +${f.releaseLastMs.toFixed(1)} ms), last request ${Math.round(f.lastRequestMs)} ms, ` +
    `last done ${Math.round(f.lastDoneMs)} ms (×${f.ratioToOptimum.toFixed(3)}), ${f.failures} failed, ${f.pauseViolations} beyond one per pause`
  );
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function pool<T, R>(items: T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** Median round trip of a bare request to the simulator at the workloads' latency (none): the "one round trip" of W1's optimum. */
async function roundTripMs(): Promise<number> {
  const sim = await startSimulator({ scripts: { '*': [{ kind: 'ok', json: GOOD }] }, logLimit: 10 });
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Sort: call 1' }] });
  const times: number[] = [];
  for (let i = 0; i < 25; i++) {
    const t0 = performance.now();
    const res = await fetch(`${sim.baseUrl('openrouter')}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.json();
    if (i >= 5) times.push(performance.now() - t0);
  }
  await sim.close();
  return spread(times).median;
}

const rotate = <T>(xs: T[], by: number) => xs.map((_, i) => xs[(i + by) % xs.length]!);

export interface PeersOptions {
  quick?: boolean;
  reps?: number;
  readme?: boolean;
  /** W4 alone, for work on the overhead: printed, nothing written (the README table needs every workload) */
  w4Only?: boolean;
  /** W1–W3 for these contenders only, W1's request log printed: printed, nothing written */
  only?: ContenderKind[];
  /** each contender process writes its V8 CPU profile (.cpuprofile) into this folder */
  cpuProfDir?: string;
  /** W4 also runs AQVEN with its SQLite writer on a worker thread (printed only: not a column of the table) */
  writerThread?: boolean;
  log?: (line: string) => void;
}

export async function runPeersBench(opts: PeersOptions = {}): Promise<{ result: PeersResult; exitCode: number }> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const t0 = performance.now();
  const loadAtStart = loadavg()[0]!;
  const reps = opts.reps ?? (opts.quick ? 1 : 3);
  // W4's repetitions are short (2,000 calls per contender) and its calls/s ratio the noisiest figure: more of them
  const w4RepCount = opts.reps ?? (opts.quick ? 1 : 5);
  const sizes = opts.quick ? { w1: 50, w2: 200, w3: 200, w4: 400 } : { w1: 50, w2: 200, w3: 500, w4: 2000 };
  try {
    contenderEntry = { file: await bundleContender(), execArgv: [] };
  } catch (e) {
    log(`contender bundle failed, starting contenders under tsx (slower): ${e instanceof Error ? e.message : String(e)}`);
  }
  if (opts.cpuProfDir) contenderEntry.execArgv.push('--cpu-prof', `--cpu-prof-dir=${resolve(opts.cpuProfDir)}`);
  const rtt = await roundTripMs();
  const rule = (kind: ContenderKind): PauseRule => ({
    windowMs: W1_WINDOW_MS,
    retryAfterMs: W1_RETRY_AFTER_S * 1000,
    burstGraceMs: 50,
    burstCap: kind.startsWith('aqven') || kind === W1_FLOOR ? AQVEN_MAX_CONCURRENCY : Infinity,
    toleranceMs: 50,
  });

  const w1Reps: Record<string, W1Figures[]> = {};
  const w2Reps: Record<string, W2Figures[]> = {};
  const w3Reps: Record<string, W3Figures[]> = {};
  for (let rep = 0; rep < (opts.w4Only ? 0 : reps); rep++) {
    // a different order each repetition: no contender always runs first on a cold machine
    // the W1 floor plays W1 alone, in the same rotation
    const kinds = opts.only ?? W1_W3_CONTENDERS;
    const plan = rotate(kinds, rep).flatMap((kind) => (kind === W1_FLOOR ? [w1(sizes.w1)] : [w1(sizes.w1), w2(sizes.w2), w3(sizes.w3)]).map((w) => ({ kind, w })));
    const ready = await pool(plan, 4, ({ kind, w }) => prepare(kind, w));
    try {
      for (const p of ready) {
        const { log: fakeLog, startedAt, result } = await p.play();
        const k = p.kind;
        // the fake's W1 log, request by request: ms after the first, call/answer, ! for a 429
        if (opts.only && p.w.name === 'w1') log(`${k} W1: ${fakeLog.map((e) => `${e.at.toFixed(1)} ${e.call}/${e.answer}${e.step.kind === 'ok' ? '' : '!'}`).join(', ')}`);
        if (p.w.name === 'w1') (w1Reps[k] ??= []).push(w1Figures(fakeLog, result.calls, p.w.kindOf, { startedAt, rttMs: rtt, rule: rule(k) }));
        if (k === W1_FLOOR) log(`rep ${rep + 1} ${k}: ${w1Line(w1Reps[k]!.at(-1)!)}`);
        if (p.w.name === 'w2') (w2Reps[k] ??= []).push(w2Figures(fakeLog, result.calls, p.w.kindOf));
        if (p.w.name === 'w3') {
          (w3Reps[k] ??= []).push(w3Figures(fakeLog, result.calls, p.w.kindOf, result.wallMs));
          const f1 = w1Reps[k]!.at(-1)!;
          const f3 = w3Reps[k]!.at(-1)!;
          log(
            `rep ${rep + 1} ${k}: ${w1Line(f1)}; ` +
              `W2 ${w2Reps[k]!.at(-1)!.badAccepted} bad accepted; W3 ${f3.successes} ok in ${Math.round(f3.wallMs)} ms (${Math.round(f3.pausedMs)} ms of it inside 429 pauses), ${f3.requestsPerSuccess.toFixed(3)} req/ok, tokens ${f3.visibleTokens}/${f3.billedTokens} visible`,
          );
        }
      }
      const toFloor = w1ToFloor({ w1: w1Reps }).at(-1);
      if (toFloor !== undefined && w1Reps[W1_FLOOR]?.length === rep + 1 && w1Reps['aqven-recorded']?.length === rep + 1)
        log(`rep ${rep + 1} W1: AQVEN's last call done ×${toFloor.toFixed(3)} the rule's floor's`);
    } finally {
      // the processes not played (a contender failed) must not outlive the bench; closing twice is harmless
      await Promise.allSettled(ready.map((p) => p.discard()));
    }
  }

  const faultsS = (performance.now() - t0) / 1000;
  if (opts.only) return { result: { w1: w1Reps, w2: w2Reps, w3: w3Reps } as PeersResult, exitCode: 0 };
  // W4: one process per contender for the whole workload, warmed up, interleaved in rounds
  const w4Reps: Record<string, { callsPerSec: number; cpuMsPerCall: number }[]> = {};
  {
    const wd = w4(sizes.w4);
    const sim = await startSimulator({ workload: keyedWorkload(wd.schedule), logLimit: 100 });
    const procs: Contender[] = [];
    try {
      for (const kind of opts.writerThread ? [...W4_CONTENDERS, WRITER_THREAD] : W4_CONTENDERS) procs.push(await spawnContender(kind, sim.baseUrl('openrouter')));
      for (const p of procs) await p.run(Math.min(W4_WARM_UP_CALLS, sizes.w4), wd.concurrency, false);
      // many short rounds: the machine's load drifts, and each contender should see the same drift
      const rounds = 10;
      const per = Math.floor(sizes.w4 / rounds);
      for (let rep = 0; rep < w4RepCount; rep++) {
        const wall: Record<string, number> = {};
        const cpu: Record<string, number> = {};
        for (let round = 0; round < rounds; round++) {
          for (const p of rotate(procs, rep * rounds + round)) {
            const r = await p.run(per, wd.concurrency, false);
            if (r.returned !== per) throw new Error(`W4: ${p.kind} returned ${r.returned} of ${per}`);
            wall[p.kind] = (wall[p.kind] ?? 0) + r.wallMs;
            cpu[p.kind] = (cpu[p.kind] ?? 0) + r.cpuMs;
          }
        }
        for (const p of procs) (w4Reps[p.kind] ??= []).push({ callsPerSec: (per * rounds) / (wall[p.kind]! / 1000), cpuMsPerCall: cpu[p.kind]! / (per * rounds) });
        const ratio = (k: string) => (w4Reps[k]!.at(-1)!.callsPerSec / w4Reps['openai-parse']!.at(-1)!.callsPerSec).toFixed(3);
        log(
          `rep ${rep + 1} W4 calls/s × openai@6: recorded ${ratio('aqven-recorded')}, engine alone ${ratio('aqven')}${opts.writerThread ? `, recorded by a writer thread ${ratio(WRITER_THREAD)}` : ''}`,
        );
        log(
          `rep ${rep + 1} W4: ${procs.map((p) => `${p.kind} ${Math.round(w4Reps[p.kind]!.at(-1)!.callsPerSec)}/s ${w4Reps[p.kind]!.at(-1)!.cpuMsPerCall.toFixed(3)} CPU ms`).join(', ')}`,
        );
      }
    } finally {
      await Promise.all(procs.map((p) => p.close()));
      await sim.close();
    }
  }

  if (opts.w4Only) return { result: { w4: w4Reps } as PeersResult, exitCode: 0 };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout: the table says so
  }
  const result: PeersResult = {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    quick: !!opts.quick,
    reps,
    w4Repetitions: w4RepCount,
    sizes,
    rttMs: rtt,
    w1: w1Reps,
    w2: w2Reps,
    w3: w3Reps,
    w4: w4Reps,
    targets: [],
    durationS: 0,
    phasesS: { faults: faultsS, w4: (performance.now() - t0) / 1000 - faultsS },
    load: { start: loadAtStart, end: loadavg()[0]! },
    cpus: cpus().length,
  };
  result.targets = evaluateTargets(result);
  result.durationS = (performance.now() - t0) / 1000;
  writeResult('peers', result);
  if (opts.readme !== false) writeReadmeTable(join(here, '..', '..', 'README.md'), renderTable(result));
  const broken = result.targets.filter((t) => t.gate && !t.met);
  for (const t of result.targets) log(`${t.met ? 'met   ' : 'MISSED'} ${t.workload} ${t.target}: ${t.value}`);
  log(
    `peers bench: ${result.durationS.toFixed(0)} s (W1–W3 ${faultsS.toFixed(0)} s, W4 ${result.phasesS.w4.toFixed(0)} s)${broken.length ? `; FAILED: ${broken.map((t) => t.target).join('; ')}` : ''}`,
  );
  return { result, exitCode: broken.length ? 1 : 0 };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const repsAt = args.indexOf('--reps');
  const onlyAt = args.indexOf('--only');
  const profAt = args.indexOf('--cpu-prof');
  const unknown = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',').filter((k) => !ONLY_CHOICES.includes(k as ContenderKind)) : [];
  if (profAt >= 0 && !(args[profAt + 1] ?? '').trim()) {
    console.error('--cpu-prof: name the folder the contenders write their CPU profiles into');
    process.exit(2);
  }
  if (unknown.length) {
    console.error(`--only: unknown contender ${unknown.map((k) => `"${k}"`).join(', ')}; one or more of ${ONLY_CHOICES.join(', ')}, comma-separated`);
    process.exit(2);
  }
  runPeersBench({
    quick: args.includes('--quick'),
    reps: repsAt >= 0 ? Number(args[repsAt + 1]) : undefined,
    readme: !args.includes('--no-readme'),
    w4Only: args.includes('--w4-only'),
    only: onlyAt >= 0 ? (args[onlyAt + 1]!.split(',') as ContenderKind[]) : undefined,
    cpuProfDir: profAt >= 0 ? args[profAt + 1] : undefined,
    writerThread: args.includes('--writer-thread'),
  }).then(
    ({ exitCode }) => {
      process.exitCode = exitCode;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 2;
    },
  );
}

export type { CallResult };
