// CPU per call (the W4 overhead workload, measured on its own): single calls at zero latency,
// concurrency 4, against one tiny OpenAI-compatible server in its own process that answers every
// request with the same valid JSON. Each contender runs in its own long-lived child process, and
// the contenders take turns in rounds (the order rotating), so a drift in a shared machine's load
// falls on all of them; ratios are computed within one repetition.
//   fetch     a bare fetch loop: the floor
//   openai    openai@6 chat.completions.parse with zodResponseFormat (maxRetries: 2)
//   engine    AQVEN's engine alone: callNode over the OpenAI adapter, no store
//   recorded  AQVEN with full recording: runFlow with the SQLite run store, as `aqven run` records
//   (unrecorded: runFlow without a database, the run loop's share; only when named in --only)
//   recorded+metrics: recorded with the process's Prometheus metrics on (lib/observe/process-metrics.ts:
//   the run observer counting every run, and a scrape of the whole exposition, database gauges
//   included, every second), against recorded in the same run: the metrics' overhead
//   recorded+traces: recorded with traces on (lib/observe/tracing.ts, as OTEL_EXPORTER_OTLP_ENDPOINT
//   switches them on): every run's four spans exported over OTLP/HTTP to a sink in the answering
//   server's process, which reads and drops them; recorded+traces+metrics: both, the issue's figure
// Reports calls/s and CPU ms per call (process.cpuUsage of the contender's process, all threads).
// --latency MS holds every answer that long and --concurrency N sets the calls in flight per
// contender (default 0 ms and 4: the CPU-bound worst case); e.g. --latency 200 --concurrency 32 is a
// service calling a fast model, where calls/s is set by the provider and the overhead is what CPU adds.
//
//   npx tsx bench/call-cpu.bench.ts [--calls 2000] [--reps 3] [--rounds 4] [--only engine,recorded] [--out none]
//     [--latency 0] [--concurrency 4]
//     [--base DIR --only openai,engine,recorded,engine@base,recorded@base]
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { oneNodeProject } from './one-node-project';
import { writeResult } from './write-result';

const CONTENDERS = ['fetch', 'openai', 'engine', 'recorded'] as const;
/**
 * `unrecorded` (runFlow with no database: the run loop's own share) runs only when named in --only;
 * `engine@base`, `recorded@base`, … run the same contender from another checkout (--base DIR, the
 * tree before a change, with this file copied in): before and after measured in one run.
 */
type Contender =
  | (typeof CONTENDERS)[number]
  | 'unrecorded'
  | `${(typeof CONTENDERS)[number] | 'unrecorded'}@base`
  | `${'recorded' | 'unrecorded'}+${Observed}`
  | `${'recorded' | 'unrecorded'}+traces+metrics`;
/** what a `+…` contender switches on besides: the process's metrics, traces exported over OTLP */
type Observed = 'metrics' | 'traces';
/** how often the `+metrics` contenders are scraped, as Prometheus would (a typical job scrapes every 15 s) */
const SCRAPE_EVERY_MS = 1000;
/** calls each contender makes before it is measured (connections, JIT, the database file) */
const WARM_UP_CALLS = 300;
const MODEL_ID = 'openai/gpt-oss-20b';
const TICKET = 'I was charged twice';
const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: MODEL_ID,
  choices: [{ index: 0, message: { role: 'assistant', content: '{"queue":"billing"}', refusal: null }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 21, completion_tokens: 6, total_tokens: 27 },
});

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Linux: CPU ms of the main thread and of all other threads (workers, libuv pool, GC helpers), to see where a contender's CPU goes. */
function threadCpu(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === process.pid ? 'main' : 'other';
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime: fields 14 and 15 of stat, in clock ticks (100 per second)
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * 10;
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The fake provider: one fixed valid answer, keep-alive, no latency; and a sink for OTLP exports (POST /v1/traces). */
function serve(latencyMs: number): void {
  const sink = { exports: 0, spans: 0 };
  process.on('message', () => process.send!(sink));
  const server = createServer((req, res) => {
    const traces = req.url === '/v1/traces';
    let body = '';
    if (traces) req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    else req.resume();
    req.on('end', () => {
      if (traces) {
        // counted, not decoded: every span of the JSON export has one spanId
        sink.exports++;
        sink.spans += body.split('"spanId"').length - 1;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
        res.end('{}');
        return;
      }
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
        res.end(ANSWER);
      };
      if (latencyMs > 0) setTimeout(answer, latencyMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.send!({ port: typeof addr === 'object' && addr ? addr.port : 0 });
  });
}

/** One contender: builds its call once, then runs batches of `n` calls, `concurrency` at a time, when told. */
async function contender(named: Contender, baseUrl: string, concurrency: number): Promise<void> {
  let one: () => Promise<void>;
  let cleanup = async () => {};
  const [who, ...observed] = named.split('+') as [Contender, ...Observed[]];
  if (who === 'fetch') {
    const body = JSON.stringify({ model: MODEL_ID, messages: [{ role: 'user', content: `Sort: ${TICKET}` }] });
    const headers = { 'content-type': 'application/json', authorization: 'Bearer bench-key' };
    one = async () => {
      const res = await fetch(`${baseUrl}/chat/completions`, { method: 'POST', headers, body });
      const j = (await res.json()) as { choices: { message: { content: string } }[] };
      JSON.parse(j.choices[0]!.message.content);
    };
  } else if (who === 'openai') {
    const { default: OpenAI } = await import('openai');
    const { zodResponseFormat } = await import('openai/helpers/zod');
    const { z } = await import('zod');
    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'bench-key', maxRetries: 2 });
    const Output = z.object({ queue: z.enum(['billing', 'tech', 'sales']) });
    one = async () => {
      const r = await client.chat.completions.parse({
        model: MODEL_ID,
        messages: [{ role: 'user', content: `Sort: ${TICKET}` }],
        response_format: zodResponseFormat(Output, 'output'),
      });
      if (r.choices[0]?.message.parsed?.queue !== 'billing') throw new Error('openai: no parsed answer');
    };
  } else {
    const { loadProject } = await import('@/lib/project');
    const dir = mkdtempSync(join(tmpdir(), 'aqven-callcpu-'));
    for (const [f, text] of Object.entries(oneNodeProject('callcpu'))) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    const { project, diagnostics } = await loadProject(dir, { env: {} });
    if (!project) throw new Error(`bench project invalid: ${JSON.stringify(diagnostics)}`);
    const providers = Object.fromEntries(Object.entries(project.providers).map(([name, p]) => [name, { ...p, baseUrl }]));
    const env: Record<string, string | undefined> = {};
    for (const p of Object.values(project.providers)) if (p.apiKeyEnv) env[p.apiKeyEnv] = 'bench-key';
    const input = { ticket: TICKET };
    if (who === 'engine') {
      const { callNode } = await import('@/lib/engine/call-node');
      const { builtinAdapters } = await import('@/lib/providers');
      const { agentPolicy, renderTemplate } = await import('@/lib/project');
      const flow = project.flows.one!;
      const node = flow.nodes.classify!;
      const agent = project.agents[node.agent]!;
      const deps = { providers, adapters: builtinAdapters, env };
      one = async () => {
        // what runFlow hands the engine for this node, rendered per call as it does
        const call = {
          nodeId: 'classify',
          agent: node.agent,
          agentFile: agent.file,
          policy: agentPolicy(agent),
          system: agent.system,
          settings: agent.settings,
          prompt: renderTemplate(node.prompt, { input, nodes: {} }),
          outputSchema: node.output,
          stream: node.stream,
        };
        const r = await callNode(call, deps);
        if (r.status !== 'succeeded') throw new Error(`engine: ${r.error?.message}`);
      };
    } else {
      const { openDb, closeDb } = await import('@/db/client');
      const { runFlow } = await import('@/lib/flow/run-flow');
      const db = who === 'recorded' ? openDb(project.databasePath) : null;
      let scrapes: NodeJS.Timeout | null = null;
      let tracing: { shutdown(): Promise<void> } | null = null;
      if (observed.includes('traces')) {
        // as a user switches them on: the standard variable, read by the one start call
        process.env.OTEL_EXPORTER_OTLP_ENDPOINT = new URL(baseUrl).origin;
        const { startTracing } = await import('@/lib/observe/tracing');
        tracing = await startTracing({ version: 'bench', log: (line) => console.error(line) });
        if (!tracing) throw new Error('traces: startTracing did not start');
      }
      if (observed.includes('metrics')) {
        const { processMetrics } = await import('@/lib/observe/process-metrics');
        const metrics = processMetrics();
        scrapes = setInterval(() => void metrics.expose(db), SCRAPE_EVERY_MS);
      }
      one = async () => {
        const r = await runFlow({ project, flow: 'one', input, providers, env, db });
        if (r.status !== 'succeeded') throw new Error(`recorded: ${JSON.stringify(r.error)}`);
      };
      cleanup = async () => {
        if (scrapes) clearInterval(scrapes);
        await tracing?.shutdown();
        if (db) await closeDb(project.databasePath);
        rmSync(dir, { recursive: true, force: true });
      };
    }
  }
  const batch = async (n: number) => {
    let next = 0;
    const th0 = threadCpu();
    const c0 = cpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await one();
      }),
    );
    const ms = performance.now() - t0;
    const cpu = cpuMs() - c0;
    const th1 = threadCpu();
    const threads = Object.fromEntries(
      Object.entries(th1)
        .map(([k, v]) => [k, v - (th0[k] ?? 0)])
        .filter(([, v]) => (v as number) > 0),
    );
    return { ms, cpu, threads };
  };
  process.on('message', (m: { n?: number; exit?: boolean }) => {
    if (m.exit) {
      void cleanup().then(() => process.exit(0));
      return;
    }
    batch(m.n!).then(
      (r) => process.send!(r),
      (err: unknown) => {
        process.send!({ error: String(err instanceof Error ? err.stack : err) });
      },
    );
  });
  process.send!({ ready: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const spread = (xs: number[], digits: number) => ({ median: +median(xs).toFixed(digits), min: +Math.min(...xs).toFixed(digits), max: +Math.max(...xs).toFixed(digits) });

function child(args: string[], extraArgv: string[] = [], tree?: string): Promise<{ proc: ChildProcess; first: Record<string, unknown> }> {
  // another tree's copy of this file runs with that tree as working directory: its tsconfig resolves its `@/` imports
  const file = tree ? join(tree, 'bench', 'call-cpu.bench.ts') : fileURLToPath(import.meta.url);
  const proc = fork(file, args, { execArgv: ['--import', 'tsx', ...extraArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...(tree && { cwd: tree }) });
  return new Promise((res, rej) => {
    proc.once('message', (first) => res({ proc, first: first as Record<string, unknown> }));
    proc.once('exit', (code) => rej(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

const ask = (proc: ChildProcess, n: number) =>
  new Promise<{ ms: number; cpu: number; threads: Record<string, number> }>((res, rej) => {
    proc.once('message', (m: { ms: number; cpu: number; threads: Record<string, number>; error?: string }) => (m.error ? rej(new Error(m.error)) : res(m)));
    proc.send({ n });
  });

export async function runCallCpuBench(
  opts: {
    calls?: number;
    reps?: number;
    rounds?: number;
    only?: Contender[];
    out?: string | null;
    profile?: Contender[];
    base?: string;
    latencyMs?: number;
    concurrency?: number;
  } = {},
) {
  const calls = opts.calls ?? 2000;
  const reps = opts.reps ?? 3;
  const rounds = opts.rounds ?? 4;
  const who = opts.only ?? [...CONTENDERS];
  const latencyMs = opts.latencyMs ?? 0;
  const concurrency = opts.concurrency ?? 4;
  const server = await child(['--role', 'server', '--latency', String(latencyMs)]);
  const baseUrl = `http://127.0.0.1:${server.first.port as number}/v1`;
  const procs = new Map<Contender, ChildProcess>();
  for (const c of who) {
    const prof = opts.profile?.includes(c) ? ['--cpu-prof', '--cpu-prof-dir', join(tmpdir(), 'aqven-cpu-prof', c)] : [];
    const [name, at] = c.split('@');
    if (at && !opts.base) throw new Error(`${c} needs --base DIR`);
    procs.set(
      c,
      (await child(['--role', 'contender', '--who', name!, '--base-url', baseUrl, '--concurrency', String(concurrency)], prof, at ? resolve(opts.base!) : undefined)).proc,
    );
  }
  try {
    // warm-up: connections, JIT, the database file
    for (const c of who) await ask(procs.get(c)!, WARM_UP_CALLS);
    const per = Math.floor(calls / rounds);
    const reps_: Record<Contender, { callsPerSec: number; cpuMsPerCall: number }>[] = [];
    for (let r = 0; r < reps; r++) {
      const sum = Object.fromEntries(who.map((c) => [c, { ms: 0, cpu: 0, threads: {} }])) as Record<Contender, { ms: number; cpu: number; threads: Record<string, number> }>;
      for (let k = 0; k < rounds; k++) {
        // rotate the order: no contender always runs first after another's round
        const order = who.map((_, i) => who[(i + k + r) % who.length]!);
        for (const c of order) {
          const m = await ask(procs.get(c)!, per);
          sum[c].ms += m.ms;
          sum[c].cpu += m.cpu;
          for (const [t, v] of Object.entries(m.threads)) sum[c].threads[t] = (sum[c].threads[t] ?? 0) + v;
        }
      }
      const rep = {} as Record<Contender, { callsPerSec: number; cpuMsPerCall: number }>;
      for (const c of who) rep[c] = { callsPerSec: (per * rounds) / (sum[c].ms / 1000), cpuMsPerCall: sum[c].cpu / (per * rounds) };
      reps_.push(rep);
      console.error(`rep ${r + 1}: ${who.map((c) => `${c} ${rep[c].callsPerSec.toFixed(0)}/s ${rep[c].cpuMsPerCall.toFixed(3)} ms`).join(' | ')}`);
      // where each contender's CPU went, per call, by thread (Linux; 10 ms ticks)
      for (const c of who)
        console.error(
          `  ${c} threads (ms/call): ${Object.entries(sum[c].threads)
            .map(([t, v]) => `${t} ${(v / (per * rounds)).toFixed(3)}`)
            .join(', ')}`,
        );
    }
    const result: Record<string, unknown> = {
      calls: Math.floor(calls / rounds) * rounds,
      concurrency,
      latencyMs,
      reps,
      rounds,
      /** the tree the `@base` contenders ran from */
      base: opts.base ?? null,
      contenders: {},
    };
    for (const c of who) {
      (result.contenders as Record<string, unknown>)[c] = {
        callsPerSec: spread(
          reps_.map((x) => x[c].callsPerSec),
          0,
        ),
        cpuMsPerCall: spread(
          reps_.map((x) => x[c].cpuMsPerCall),
          4,
        ),
      };
    }
    if (who.includes('openai')) {
      const ratios: Record<string, unknown> = {};
      for (const c of who) {
        if (c === 'openai') continue;
        ratios[c] = {
          /** calls/s ÷ openai's, within each repetition: above 1 is faster */
          throughputVsOpenai: spread(
            reps_.map((x) => x[c].callsPerSec / x.openai.callsPerSec),
            3,
          ),
          /** CPU per call ÷ openai's: below 1 is cheaper */
          cpuVsOpenai: spread(
            reps_.map((x) => x[c].cpuMsPerCall / x.openai.cpuMsPerCall),
            3,
          ),
        };
      }
      result.ratios = ratios;
    }
    // a `+metrics`, `+traces`, … contender against the same contender without, within each repetition
    const observed = who.filter((c) => c.includes('+') && who.includes(c.split('+')[0] as Contender));
    if (observed.length > 0) {
      const vsBase: Record<string, unknown> = {};
      for (const c of observed) {
        const base = c.split('+')[0] as Contender;
        vsBase[c] = {
          /** calls/s ÷ the base's: 0.95 is 5% fewer calls/s */
          throughput: spread(
            reps_.map((x) => x[c].callsPerSec / x[base].callsPerSec),
            3,
          ),
          /** CPU per call ÷ the base's */
          cpu: spread(
            reps_.map((x) => x[c].cpuMsPerCall / x[base].cpuMsPerCall),
            3,
          ),
        };
      }
      result.vsBase = vsBase;
    }
    if (who.some((c) => c.includes('+traces'))) {
      // what reached the collector once the traced contenders ended (their last spans sent at exit):
      // a run is 4 spans (run, node, attempt, try); fewer is spans dropped
      for (const c of who.filter((x) => x.includes('+traces'))) {
        const p = procs.get(c)!;
        p.send({ exit: true });
        await new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)));
        procs.delete(c);
      }
      const sink = await new Promise<{ exports: number; spans: number }>((res) => {
        server.proc.once('message', (m) => res(m as { exports: number; spans: number }));
        server.proc.send({ count: true });
      });
      const runs = who.filter((c) => c.includes('+traces')).length * (WARM_UP_CALLS + Math.floor(calls / rounds) * rounds * reps);
      result.traceSink = { ...sink, runsTraced: runs, spansPerRun: +(sink.spans / runs).toFixed(3) };
    }
    if (opts.out !== null) writeResult(opts.out ?? 'call-cpu', result);
    return result;
  } finally {
    for (const p of procs.values()) p.send({ exit: true });
    await Promise.all([...procs.values()].map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)))));
    server.proc.kill();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      role: { type: 'string' },
      who: { type: 'string' },
      'base-url': { type: 'string' },
      calls: { type: 'string' },
      reps: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'string' },
      base: { type: 'string' },
      latency: { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  if (values.role === 'server') serve(Number(values.latency ?? 0));
  else if (values.role === 'contender') await contender(values.who as Contender, values['base-url']!, Number(values.concurrency ?? 4));
  else {
    const r = await runCallCpuBench({
      calls: values.calls ? Number(values.calls) : undefined,
      latencyMs: values.latency ? Number(values.latency) : undefined,
      concurrency: values.concurrency ? Number(values.concurrency) : undefined,
      reps: values.reps ? Number(values.reps) : undefined,
      rounds: values.rounds ? Number(values.rounds) : undefined,
      only: values.only ? (values.only.split(',') as Contender[]) : undefined,
      out: values.out === 'none' ? null : values.out,
      profile: values.profile ? (values.profile.split(',') as Contender[]) : undefined,
      base: values.base,
    });
    console.log(JSON.stringify(r, null, 2));
  }
}
