// What the Prometheus metrics cost a run, on their own (lib/observe/metrics.ts): the observer told
// a one-node run's events (run_start, turn_start, attempt_start, try_start, try_end, attempt_end,
// node_end, run_end — as a recorded run of bench/call-cpu.bench.ts tells them), N runs in a row, in
// CPU µs per run; and one scrape of the exposition it leaves (without the database's gauges), in
// ms. Beside call-cpu's `recorded+metrics` (the whole process, against `recorded`), this figure does
// not move with the machine's load.
//
//   npx tsx bench/metrics-observer.bench.ts [--runs 200000] [--out none]
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { AttemptRecord } from '@/lib/engine/types';
import type { ObservedRun } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import type { RunRecord } from '@/lib/flow/run-record';
import type { Project } from '@/lib/project';
import { createMetrics } from '@/lib/observe/metrics';
import { writeResult } from './write-result';

const MODEL = 'openrouter:openai/gpt-oss-20b';

function runEvents(i: number): ProgressEvent[] {
  const attempt = {
    seq: 1,
    model: MODEL,
    chainIndex: 0,
    answerNo: 1,
    outcome: 'ok',
    finishReason: 'stop',
    cause: null,
    action: 'none',
    request: [],
    responseText: '{"queue":"billing"}',
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage: { inputTokens: 21, outputTokens: 6, costUsd: 0.0000017 },
    startedAt: i,
    finishedAt: i + 3,
    tries: [],
  } satisfies AttemptRecord;
  const engine = (event: Extract<ProgressEvent, { type: 'engine' }>['event']): ProgressEvent => ({ type: 'engine', node: 'classify', event });
  return [
    { type: 'run_start', runId: `r${i}`, flow: 'one' },
    { type: 'turn_start', turn: 1, nodes: ['classify'], at: i },
    engine({ type: 'attempt_start', nodeId: 'classify', seq: 1, model: MODEL, chainIndex: 0, answerNo: 1, request: [], startedAt: i }),
    engine({ type: 'try_start', nodeId: 'classify', seq: 1, tryNo: 1, at: i }),
    engine({ type: 'try_end', nodeId: 'classify', seq: 1, try: { tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: i, finishedAt: i + 3 } }),
    engine({ type: 'attempt_end', nodeId: 'classify', attempt }),
    {
      type: 'node_end',
      node: 'classify',
      result: { status: 'succeeded', output: {}, error: null, usage: attempt.usage, attempts: [attempt], budget: { retries: 0, models: [] } },
      at: i + 3,
    },
    { type: 'run_end', record: { id: `r${i}`, status: 'succeeded' } as RunRecord },
  ];
}

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

export async function runMetricsObserverBench(o: { runs?: number; out?: string | null } = {}) {
  const runs = o.runs ?? 200_000;
  const metrics = createMetrics();
  const run = (i: number): ObservedRun => ({
    runId: `r${i}`,
    project: 'bench',
    flow: 'one',
    kind: 'flow',
    startedBy: null,
    startedAt: i,
    resumed: false,
    db: null,
    config: {} as Project,
    agents: { classify: 'classifier' },
    parent: null,
    traceId: null,
  });
  // the events are made beforehand: what is timed is the observer
  const events = Array.from({ length: 1000 }, (_, i) => runEvents(i));
  const tell = (n: number) => {
    for (let i = 0; i < n; i++) {
      const watch = metrics.observer.watch(run(i))!;
      for (const e of events[i % events.length]!) watch.event(e);
    }
  };
  tell(10_000); // warm-up
  const c0 = cpuUs();
  tell(runs);
  const perRunUs = (cpuUs() - c0) / runs;
  const scrapes = 200;
  const s0 = cpuUs();
  let bytes = 0;
  for (let i = 0; i < scrapes; i++) bytes = (await metrics.expose(null)).body.length;
  const scrapeMs = (cpuUs() - s0) / scrapes / 1000;
  const result = { runs, observerUsPerRun: +perRunUs.toFixed(2), scrapeMs: +scrapeMs.toFixed(3), exposedBytes: bytes };
  if (o.out !== null) writeResult(o.out ?? 'metrics-observer', result);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, out: { type: 'string' } } });
  console.log(JSON.stringify(await runMetricsObserverBench({ runs: values.runs ? Number(values.runs) : undefined, out: values.out === 'none' ? null : values.out }), null, 2));
}
