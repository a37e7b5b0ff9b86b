// The run spans from a run's facts alone (lib/observe/run-spans.ts), in memory: times from the facts
// (a virtual clock's), a run the stop cut off ends every span it left open from its record, a run
// handed back ends its spans without an error, and a run the sampler leaves out opens no trace.
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { ObservedRun } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import type { RunRecord } from '@/lib/flow/run-record';
import { runSpansObserver } from './run-spans';

const T = Date.UTC(2026, 0, 5, 9); // a virtual clock's start
const RUN = {
  runId: 'run-1',
  project: 'p',
  flow: 'triage',
  kind: 'flow',
  agents: { classify: 'classifier' },
  startedBy: null,
  startedAt: T,
  resumed: false,
  db: null,
  config: {} as ObservedRun['config'],
  parent: null,
  traceId: null,
} satisfies ObservedRun;
const usage = { inputTokens: 12, outputTokens: 0, costUsd: 0.0001 };

function traced(sampler?: AlwaysOffSampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ ...(sampler && { sampler }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const observer = runSpansObserver({ tracer: provider.getTracer('test'), captureContent: false });
  const byName = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name)!;
  return { observer, exporter, byName };
}

const ms = (s: ReadableSpan, which: 'startTime' | 'endTime') => s[which][0] * 1000 + s[which][1] / 1e6;

/** classify starts at T+10, its first attempt at T+20, its try answers 200 from T+30 to T+40; then `end` */
function events(end: ProgressEvent[]): ProgressEvent[] {
  const engine = (event: Extract<ProgressEvent, { type: 'engine' }>['event']): ProgressEvent => ({ type: 'engine', node: 'classify', event });
  return [
    { type: 'run_start', runId: 'run-1', flow: 'triage' },
    { type: 'turn_start', turn: 1, nodes: ['classify'], at: T + 10 },
    engine({ type: 'attempt_start', nodeId: 'classify', seq: 1, model: 'openrouter:openai/gpt-oss-20b', chainIndex: 0, answerNo: 1, request: [], startedAt: T + 20 }),
    engine({ type: 'try_start', nodeId: 'classify', seq: 1, tryNo: 1, at: T + 30 }),
    engine({ type: 'try_end', nodeId: 'classify', seq: 1, try: { tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 10, startedAt: T + 30, finishedAt: T + 40 } }),
    ...end,
  ];
}

const cut = {
  seq: 1,
  error: { kind: 'transport', message: 'the run was stopped by SIGTERM', detail: null, validationErrors: [] },
} as unknown as RunRecord['nodes'][0]['attempts'][0];
const record = (status: RunRecord['status'], nodeStatus: RunRecord['nodes'][0]['status'], finishedAt: number | null): RunRecord =>
  ({
    id: 'run-1',
    flow: 'triage',
    status,
    usage,
    usageUnknown: true,
    finishedAt: finishedAt === null ? null : new Date(finishedAt).toISOString(),
    error: status === 'interrupted' ? { code: 'interrupted', node: 'classify', message: 'the run was stopped by SIGTERM', hint: '' } : null,
    nodes: [
      { id: 'classify', status: nodeStatus, error: nodeStatus === 'failed' ? { code: 'interrupted', message: 'the run was stopped by SIGTERM', hint: '' } : null, attempts: [cut] },
    ],
  }) as unknown as RunRecord;

describe('run spans', () => {
  it("a run the stop cut off: the attempt in flight, its node and the run end when the run ended, failed, from the record's words", () => {
    const { observer, exporter, byName } = traced();
    const watch = observer.watch(RUN)!;
    expect(watch.traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const e of events([
      { type: 'engine', node: 'classify', event: { type: 'attempt_interrupted', nodeId: 'classify', seq: 1, usage, usageUnknown: true } },
      { type: 'run_end', record: record('interrupted', 'failed', T + 50) },
    ]))
      watch.event(e);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['POST', 'chat openai/gpt-oss-20b', 'invoke_agent classifier', 'invoke_workflow triage']);
    const [run, node, attempt, tried] = [byName('invoke_workflow triage'), byName('invoke_agent classifier'), byName('chat openai/gpt-oss-20b'), byName('POST')];
    expect([ms(run, 'startTime'), ms(node, 'startTime'), ms(attempt, 'startTime'), ms(tried, 'startTime'), ms(tried, 'endTime')]).toEqual([T, T + 10, T + 20, T + 30, T + 40]);
    for (const s of [run, node, attempt]) expect(ms(s, 'endTime')).toBe(T + 50);
    expect(attempt.status).toEqual({ code: 2, message: 'the run was stopped by SIGTERM' });
    expect(attempt.attributes).toMatchObject({ 'error.type': 'interrupted', 'aqven.usage_unknown': true, 'gen_ai.usage.input_tokens': 12 });
    expect(node.attributes).toMatchObject({ 'aqven.node.status': 'failed', 'error.type': 'interrupted' });
    expect(node.status.code).toBe(2);
    expect(run.attributes).toMatchObject({ 'aqven.run.status': 'interrupted', 'error.type': 'interrupted' });
    expect(run.status.code).toBe(2);
  });

  it('a run handed back: its spans end when it left, the node still running, nothing failed but the attempt it cut', () => {
    const { observer, exporter, byName } = traced();
    const watch = observer.watch(RUN)!;
    for (const e of events([{ type: 'run_handed_back', record: record('running', 'running', null), reason: 'the worker is draining', at: T + 60 }])) watch.event(e);
    expect(exporter.getFinishedSpans()).toHaveLength(4);
    const [run, node] = [byName('invoke_workflow triage'), byName('invoke_agent classifier')];
    expect(ms(run, 'endTime')).toBe(T + 60);
    expect(run.attributes).toMatchObject({ 'aqven.run.status': 'running', 'aqven.handed_back': 'the worker is draining' });
    expect(run.status.code).toBe(0);
    expect(node.attributes['aqven.node.status']).toBe('running');
    expect(node.status.code).toBe(0);
    expect(byName('chat openai/gpt-oss-20b').status.code).toBe(2);
    // later facts of the run (a straggler) change nothing
    watch.event({ type: 'run_end', record: record('succeeded', 'succeeded', T + 70) });
    expect(exporter.getFinishedSpans()).toHaveLength(4);
  });

  it('a run the sampler leaves out opens no trace and is not watched', () => {
    const { observer, exporter } = traced(new AlwaysOffSampler());
    expect(observer.watch(RUN)).toBeNull();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("a caller's span is the run span's parent, in the caller's trace", () => {
    const { observer, byName } = traced();
    const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true, header: '' };
    const watch = observer.watch({ ...RUN, parent, traceId: parent.traceId })!;
    expect(watch.traceId).toBe(parent.traceId);
    watch.event({ type: 'run_end', record: record('succeeded', 'succeeded', T + 5) });
    const run = byName('invoke_workflow triage');
    expect(run.spanContext().traceId).toBe(parent.traceId);
    expect(run.parentSpanContext?.spanId).toBe(parent.spanId);
  });
});
