// Engine overhead per attempt, non-streaming: everything callNode does except waiting on the
// provider. Against the in-process simulator (zero latency), each iteration times one callNode and
// one raw node:http exchange of the byte-identical request on a keep-alive connection (the
// baseline: the engine sends on node:http too, lib/engine/http-client.ts; a fetch baseline cost
// more than the whole engine), interleaved so both see the same machine state;
// overhead = median(callNode) − median(raw exchange). Target: < 1 ms median.
//
//   npx tsx bench/engine.bench.ts [iterations]
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { callNode } from '@/lib/engine/call-node';
import { initialMessages } from '@/lib/engine/messages';
import { createRateGate } from '@/lib/engine/rate-gate';
import type { EngineEvent, NodeCall, ResolvedProvider } from '@/lib/engine/types';
import { builtinAdapters } from '@/lib/providers';
import { startSimulator } from '@/lib/sim';
import type { Dialect } from '@/lib/sim/types';

export interface EngineBenchOptions {
  /** measured iterations per dialect (default 2000) */
  iterations?: number;
  /** unmeasured iterations first (default 300) */
  warmup?: number;
  dialects?: Dialect[];
  /** where to write the JSON; null = don't write (default bench/results/engine.json) */
  out?: string | null;
}

export interface DialectFigures {
  iterations: number;
  engineMedianMs: number;
  rawMedianMs: number;
  overheadMedianMs: number;
  /** tails are dominated by loopback and GC noise on both sides; reported, not judged */
  engineP90Ms: number;
  rawP90Ms: number;
  /** engine median / raw median */
  ratio: number;
}

export interface EngineBenchResult {
  benchmark: 'engine-overhead-per-attempt';
  node: string;
  date: string;
  targetMs: number;
  /** the worst dialect's median overhead */
  overheadMedianMs: number;
  pass: boolean;
  dialects: Partial<Record<Dialect, DialectFigures>>;
}

const SCHEMA = {
  type: 'object',
  properties: { queue: { enum: ['billing', 'tech', 'sales'] }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
  required: ['queue', 'confidence'],
};

const PROVIDER_OF: Record<Dialect, { name: string; api: ResolvedProvider['api']; modelId: string }> = {
  openai: { name: 'openai', api: 'openai', modelId: 'gpt-4.1-mini' },
  openrouter: { name: 'openrouter', api: 'openai', modelId: 'openai/gpt-oss-20b' },
  anthropic: { name: 'anthropic', api: 'anthropic', modelId: 'claude-sonnet-4-5' },
  gemini: { name: 'google', api: 'gemini', modelId: 'gemini-2.5-flash' },
};

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const round = (x: number) => Math.round(x * 1000) / 1000;

export async function runEngineBench(opts: EngineBenchOptions = {}): Promise<EngineBenchResult> {
  const iterations = opts.iterations ?? 2000;
  const warmup = opts.warmup ?? 300;
  const dialects = opts.dialects ?? (['openai', 'openrouter', 'anthropic', 'gemini'] as Dialect[]);
  const sim = await startSimulator({ logLimit: 100 });
  const result: EngineBenchResult = {
    benchmark: 'engine-overhead-per-attempt',
    node: process.version,
    date: new Date().toISOString(),
    targetMs: 1,
    overheadMedianMs: 0,
    pass: true,
    dialects: {},
  };
  // the baseline's connections, kept alive as the engine keeps its own
  const keepAlive = new Agent({ keepAlive: true });
  try {
    for (const dialect of dialects) {
      const p = PROVIDER_OF[dialect];
      const provider: ResolvedProvider = {
        name: p.name,
        api: p.api,
        baseUrl: sim.baseUrl(dialect),
        apiKeyEnv: 'BENCH_KEY',
        structuredOutputs: true,
        transport: { maxAttempts: 3, budgetMs: 60_000, timeoutMs: 120_000, idleTimeoutMs: 120_000, tryDeadlineMs: 1_800_000, maxResponseBytes: 8 * 1024 * 1024 },
        onRateLimit: { maxAttempts: 5, defaultWaitMs: 1000, maxWaitMs: 60_000 },
        maxConcurrency: 16,
        models: { [p.modelId]: { inputPerMtok: 0.1, outputPerMtok: 0.4 } },
      };
      const call: NodeCall = {
        nodeId: 'classify',
        agent: 'classifier',
        agentFile: 'agents/classifier.yaml',
        policy: { chain: [`${p.name}:${p.modelId}`], retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict: false },
        system: 'You sort support tickets.',
        prompt: 'Sort this ticket into a queue: my invoice is wrong',
        outputSchema: SCHEMA,
        settings: { temperature: 0 },
      };
      const deps = {
        providers: { [p.name]: provider },
        adapters: builtinAdapters,
        gate: createRateGate(),
        env: { BENCH_KEY: 'bench-key' },
        // a recorder-like handler: awaited, cheap
        onEvent: (e: EngineEvent) => void e,
      };
      // the baseline sends the byte-identical request the engine builds
      const wire = builtinAdapters[p.api].buildRequest({ modelId: p.modelId, messages: initialMessages(call), settings: call.settings, stream: false }, provider, 'bench-key');
      const target = new URL(wire.url);
      const raw = () =>
        new Promise<void>((done, fail) => {
          const req = request(
            {
              host: target.hostname,
              port: target.port,
              path: target.pathname + target.search,
              method: 'POST',
              headers: { ...wire.headers, 'content-length': Buffer.byteLength(wire.body) },
              agent: keepAlive,
            },
            (res) => {
              res.on('error', fail);
              res.on('end', () => done());
              res.resume();
            },
          );
          req.on('error', fail);
          req.end(wire.body);
        });
      const engine = async () => {
        const r = await callNode(call, deps);
        if (r.status !== 'succeeded') throw new Error(`bench call failed: ${r.error?.message}`);
      };

      const e: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        // alternate the order so neither side always runs on a warmer connection
        const first = i % 2 === 0 ? engine : raw;
        const second = first === engine ? raw : engine;
        const t0 = performance.now();
        await first();
        const t1 = performance.now();
        await second();
        const t2 = performance.now();
        if (i < warmup) continue;
        (first === engine ? e : b).push(t1 - t0);
        (first === engine ? b : e).push(t2 - t1);
      }
      const fig: DialectFigures = {
        iterations,
        engineMedianMs: round(quantile(e, 0.5)),
        rawMedianMs: round(quantile(b, 0.5)),
        overheadMedianMs: round(quantile(e, 0.5) - quantile(b, 0.5)),
        engineP90Ms: round(quantile(e, 0.9)),
        rawP90Ms: round(quantile(b, 0.9)),
        ratio: round(quantile(e, 0.5) / quantile(b, 0.5)),
      };
      result.dialects[dialect] = fig;
    }
  } finally {
    keepAlive.destroy();
    await sim.close();
  }
  result.overheadMedianMs = Math.max(...Object.values(result.dialects).map((d) => d!.overheadMedianMs));
  result.pass = result.overheadMedianMs < result.targetMs;
  const out = opts.out === undefined ? resolve(dirname(fileURLToPath(import.meta.url)), 'results/engine.json') : opts.out;
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  }
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const iterations = process.argv[2] ? Number(process.argv[2]) : undefined;
  runEngineBench({ iterations }).then(
    (r) => {
      for (const [d, f] of Object.entries(r.dialects)) {
        console.log(
          `${d.padEnd(10)} engine ${f!.engineMedianMs.toFixed(3)} ms  raw http ${f!.rawMedianMs.toFixed(3)} ms  overhead ${f!.overheadMedianMs.toFixed(3)} ms  ratio ${f!.ratio.toFixed(2)}`,
        );
      }
      console.log(`median overhead per attempt (worst dialect): ${r.overheadMedianMs.toFixed(3)} ms — target < ${r.targetMs} ms: ${r.pass ? 'PASS' : 'FAIL'}`);
      process.exitCode = r.pass ? 0 : 1;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 2;
    },
  );
}
