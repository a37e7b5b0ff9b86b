// Timing of AQVEN's transport under rate limits and mixed faults, beside openai@6 with its own
// retries (maxRetries 2), each contender in its own process against one fake OpenAI-compatible
// provider (bench/transport-timing-fake.mjs, faults keyed by call and answer number).
//   W1: 50 concurrent calls; every request in a 2 s window from the first gets 429 retry-after: 1.
//   W3: 500 concurrent calls; per answer 5% 429 retry-after 0.2, 3% 500, 2% dropped connection,
//       5% invalid JSON, 2% truncated.
//   W3x: W3 with its 429s sent as 503 retry-after 0.2 — the same waits without AQVEN's model-wide
//       pause and probe: W3 − W3x is what the pause costs when the 429s are isolated.
// AQVEN runs with default provider settings (max_concurrency 16; the peer has no cap) and
// output.retries 2. AQVEN_BEFORE=<dir> adds a second AQVEN from another tree (e.g. the previous
// commit, unpacked with its node_modules linked) to compare before/after within one run.
//
//   npx tsx bench/transport-timing.bench.ts [repetitions]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { writeResult } from './write-result';

type Workload = 'W1' | 'W3' | 'W3x';
type Contender = 'aqven' | 'aqven-before' | 'aqven-recorded' | 'aqven-recorded-before' | 'openai';

const LATENCY_MS = 10;
const W1 = { calls: 50, windowMs: 2000, retryAfter: '1' };
const W3 = { calls: 500, retryAfter: '0.2', rates: { '429': 0.05, '500': 0.03, drop: 0.02, invalid: 0.05, truncated: 0.02 } };

interface ChildFigures {
  /** ms from the start to each call's end, in call order */
  doneMs: number[];
  ok: boolean[];
  /** a bare round trip to the fake, measured before the workload */
  rttMs: number;
}

// ---------------------------------------------------------------------------------------------
// one contender, in its own process

const prompt = (i: number) => `Sort this ticket into a queue: ticket #${i}: my invoice is wrong`;

async function bareRtt(base: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: prompt(-1) }] }),
    });
    await res.text();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[3]!;
}

async function runAqven(base: string, calls: number): Promise<(i: number) => Promise<boolean>> {
  const { callNode } = await import('@/lib/engine/call-node');
  const { createRateGate } = await import('@/lib/engine/rate-gate');
  const { builtinAdapters } = await import('@/lib/providers');
  const { builtInProvider } = await import('@/lib/project/builtin-providers');
  const provider = { ...builtInProvider('openai')!, name: 'fake', baseUrl: `${base}/v1`, apiKeyEnv: 'FAKE_API_KEY', structuredOutputs: true };
  const schema = { type: 'object', properties: { queue: { enum: ['billing', 'tech', 'sales'] }, confidence: { type: 'number' } }, required: ['queue', 'confidence'] };
  const deps = { providers: { fake: provider }, adapters: builtinAdapters, gate: createRateGate(), env: { FAKE_API_KEY: 'k' } };
  void calls;
  return async (i: number) => {
    const r = await callNode(
      {
        nodeId: 'classify',
        agent: 'classifier',
        agentFile: 'agents/classifier.yaml',
        policy: { chain: ['fake:fake-model'], retries: 2, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict: false },
        prompt: prompt(i),
        outputSchema: schema,
      },
      deps,
    );
    return r.status === 'succeeded';
  };
}

/** As `aqven run` does: a project, runFlow, every attempt recorded in SQLite. */
async function runAqvenRecorded(base: string): Promise<(i: number) => Promise<boolean>> {
  const { mkdirSync, mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { loadProject } = await import('@/lib/project');
  const { runFlow } = await import('@/lib/flow/run-flow');
  const { openDb } = await import('@/db/client');
  const dir = mkdtempSync(join(tmpdir(), 'aqven-tt-'));
  const files: Record<string, string> = {
    'aqven.yaml': 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "tt"\n',
    'providers/fake.yaml': `apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "${base}/v1"\napi_key_env: "FAKE_API_KEY"\n`,
    'agents/sorter.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "fake:fake-model"\noutput:\n  retries: 2\n',
    'flows/one.yaml':
      'apiVersion: "aqven/v1"\nkind: "Flow"\ninput: { type: object, properties: { ticket: { type: string } }, required: [ticket] }\nnodes:\n  classify:\n    agent: "sorter"\n    prompt: "Sort this ticket into a queue: ticket #{{ input.ticket }}"\n    output: { type: object, properties: { queue: { enum: [billing, tech, sales] }, confidence: { type: number } }, required: [queue, confidence] }\n',
  };
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const env = { FAKE_API_KEY: 'k' };
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) throw new Error(JSON.stringify(diagnostics));
  const db = openDb(project.databasePath);
  return async (i: number) => {
    const r = await runFlow({ project, flow: 'one', input: { ticket: String(i) }, providers: project.providers, env, db });
    return r.status === 'succeeded';
  };
}

async function runOpenai(base: string): Promise<(i: number) => Promise<boolean>> {
  const { default: OpenAI } = await import('openai');
  const { zodResponseFormat } = await import('openai/helpers/zod');
  const { z } = await import('zod');
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 2 });
  const Ticket = z.object({ queue: z.enum(['billing', 'tech', 'sales']), confidence: z.number() });
  return async (i: number) => {
    try {
      const r = await client.chat.completions.parse({
        model: 'fake-model',
        messages: [{ role: 'user', content: prompt(i) }],
        response_format: zodResponseFormat(Ticket, 'ticket'),
      });
      return r.choices[0]?.message.parsed != null;
    } catch {
      return false;
    }
  };
}

async function child(contender: Contender, port: number, calls: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const one = contender === 'openai' ? await runOpenai(base) : contender.startsWith('aqven-recorded') ? await runAqvenRecorded(base) : await runAqven(base, calls);
  // warm up the contender's code and connections (call -1 is never faulted nor logged)
  for (let i = 0; i < 5; i++) await one(-1);
  const rttMs = await bareRtt(base);
  process.stdout.write('ready\n');
  await new Promise<void>((r) => process.stdin.once('data', () => r()));
  const t0 = performance.now();
  const doneMs: number[] = new Array(calls);
  const ok: boolean[] = new Array(calls);
  await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      ok[i] = await one(i).catch(() => false);
      doneMs[i] = performance.now() - t0;
    }),
  );
  process.stdout.write(`${JSON.stringify({ doneMs, ok, rttMs } satisfies ChildFigures)}\n`);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// the driver

interface LogEntry {
  t: number;
  call: number;
  k: number;
  fault: string;
}

function lines(proc: ReturnType<typeof spawn>): AsyncIterator<string> {
  return createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
}

async function startFake(): Promise<{ port: number; stop: () => void }> {
  const proc = spawn(process.execPath, [resolve(dirname(fileURLToPath(import.meta.url)), 'transport-timing-fake.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await lines(proc).next();
  return { port: JSON.parse(first.value as string).port, stop: () => proc.kill() };
}

async function control(port: number, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body ?? {}) });
  return res.json();
}

async function runChild(contender: Contender, workload: Workload, port: number): Promise<ChildFigures & { log: LogEntry[] }> {
  const dir = contender.endsWith('-before') ? process.env.AQVEN_BEFORE! : process.cwd();
  const calls = workload === 'W1' ? W1.calls : W3.calls;
  const mixed = { mode: 'mixed', seed: 15, rates: W3.rates, retryAfter: W3.retryAfter, latencyMs: LATENCY_MS, rateLimitAs503: workload === 'W3x' };
  await control(port, '/reset', { mode: 'ok', latencyMs: LATENCY_MS });
  const proc = spawn(
    process.execPath,
    [resolve(process.cwd(), 'node_modules/tsx/dist/cli.mjs'), resolve(dir, 'bench/transport-timing.bench.ts'), '--child', contender, String(port), String(calls)],
    {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const out = lines(proc);
  if ((await out.next()).value !== 'ready') throw new Error(`${contender} did not start`);
  await control(port, '/reset', workload === 'W1' ? { mode: 'window', windowMs: W1.windowMs, retryAfter: W1.retryAfter, latencyMs: LATENCY_MS } : mixed);
  proc.stdin!.write('go\n');
  const result = JSON.parse((await out.next()).value as string) as ChildFigures;
  const log = (await (await fetch(`http://127.0.0.1:${port}/log`)).json()) as LogEntry[];
  return { ...result, log };
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function figures(workload: Workload, r: ChildFigures & { log: LogEntry[] }) {
  const successes = r.ok.filter(Boolean).length;
  const lastMs = Math.max(...r.doneMs);
  const requests = r.log.length;
  const first = Math.min(...r.log.map((e) => e.t));
  if (workload === 'W1') {
    const optimumMs = W1.windowMs + r.rttMs;
    return {
      requests,
      status429: r.log.filter((e) => e.fault === '429').length,
      inWindow: r.log.filter((e) => e.t - first < W1.windowMs).length,
      lastMs: Math.round(lastMs),
      optimumMs: Math.round(optimumMs),
      vsOptimum: r2(lastMs / optimumMs),
      failures: r.ok.length - successes,
    };
  }
  return { successes, wallMs: Math.round(lastMs), requests, requestsPerSuccess: r2(requests / successes), rateLimited: r.log.filter((e) => e.fault === '429').length };
}

async function driver(reps: number): Promise<void> {
  const fake = await startFake();
  const contenders = (process.env.CONTENDERS?.split(',') ?? (process.env.AQVEN_BEFORE ? ['aqven', 'aqven-before', 'openai'] : ['aqven', 'openai'])) as Contender[];
  const all: Record<string, Record<string, ReturnType<typeof figures>[]>> = { W1: {}, W3: {}, W3x: {} };
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const workload of (process.env.WORKLOADS?.split(',') ?? ['W1', 'W3']) as Workload[]) {
        // rotate the order each repetition so no contender always runs on a warmer machine
        const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]!);
        for (const c of order) {
          const r = await runChild(c, workload, fake.port);
          const f = figures(workload, r);
          if (process.env.TIMING_LOG) writeFileSync(`${process.env.TIMING_LOG}-${workload}-${c}-${rep}.json`, JSON.stringify(r));
          (all[workload]![c] ??= []).push(f);
          console.log(workload, c.padEnd(13), JSON.stringify(f));
        }
      }
    }
  } finally {
    fake.stop();
  }
  const summary: Record<string, unknown> = {};
  for (const [w, byC] of Object.entries(all)) {
    for (const [c, fs] of Object.entries(byC)) {
      const keys = Object.keys(fs[0]!) as (keyof (typeof fs)[0])[];
      summary[`${w} ${c}`] = Object.fromEntries(
        keys.map((k) => [k, { median: median(fs.map((f) => f[k] as number)), min: Math.min(...fs.map((f) => f[k] as number)), max: Math.max(...fs.map((f) => f[k] as number)) }]),
      );
    }
  }
  console.log(JSON.stringify(summary, null, 1));
  writeResult('transport-timing', { latencyMs: LATENCY_MS, reps, runs: all, summary });
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  void child(args[1] as Contender, Number(args[2]), Number(args[3]));
} else {
  void driver(Number(args[0] ?? 3));
}
