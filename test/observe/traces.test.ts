// Traces (DESIGN: Observability, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector
// (an OTLP/HTTP receiver in this test), the runs the dashboard starts (POST /api/runs, SQLite mode:
// the run in this process) arrive as spans — run, node, attempt, try — in the OpenTelemetry GenAI
// conventions' names, with no prompt or answer text unless the content setting is on (and then
// redacted), and continuing the trace of a caller's W3C traceparent.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { interruptAll } from '@/lib/flow/active-runs';
import { CAPTURE_CONTENT_ENV, startTracing, type Tracing } from '@/lib/observe/tracing';
import type { ScriptMap } from '@/lib/sim/types';
import { getRun, postRun } from '../helpers/api-call';
import { otlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { saveEnv } from '../helpers/saved-env';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

vi.mock('server-only', () => ({}));
vi.mock('next/headers', () => import('@/test/helpers/next-headers'));

const restoreEnv = saveEnv(['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'OTEL_EXPORTER_OTLP_HEADERS', CAPTURE_CONTENT_ENV]);
const dashboard = simulatedDashboard();
let receiver: OtlpReceiver;
let tracing: Tracing | null = null;
let loadScripts: (s: ScriptMap) => void;

/** classify: a 429 then an answer that breaks the schema (repaired), an error (the fallback model takes it), the fallback answers; draft answers */
const SCRIPTS: ScriptMap = {
  [FLASH_LITE]: [{ kind: 'status', status: 429, headers: { 'retry-after-ms': '50' } }, { kind: 'invalid' }, { kind: 'provider_error' }],
  [GPT_OSS]: [{ kind: 'ok' }],
};
const TICKET = 'I was charged twice this month, please write to jane.doe@example.com';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

beforeAll(async () => {
  receiver = await otlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_SERVICE_NAME = 'aqven-under-test';
  process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-collector-key=collector-secret-1';
  delete process.env[CAPTURE_CONTENT_ENV];
  const { session } = await dashboard.open();
  loadScripts = (s) => session.simulated!.sim.loadScripts(s);
}, 90_000);

afterAll(async () => {
  await tracing?.shutdown();
  await interruptAll('the test is over', 0);
  await dashboard.close();
  await receiver?.close();
  restoreEnv();
});

/** A triage run started through POST /api/runs (waiting for its end), and its spans once the tracer sent them. */
async function tracedRun(headers: Record<string, string> = {}) {
  loadScripts(SCRIPTS);
  const res = await postRun<{ id: string; status: string; traceId?: string }>({ flow: 'triage', input: { ticket: TICKET } }, { prefer: 'wait=30', ...headers });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('succeeded');
  await tracing!.flush();
  const spans = receiver.spans().filter((s) => s.attributes['aqven.run.id'] === res.body.id || s.traceId === res.body.traceId);
  return { record: res.body, spans };
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId).sort((a, b) => a.startMs - b.startMs || a.name.localeCompare(b.name));
const bySeq = (a: ReceivedSpan, b: ReceivedSpan) => Number(a.attributes['aqven.attempt.seq']) - Number(b.attributes['aqven.attempt.seq']);
const within = (child: ReceivedSpan, parent: ReceivedSpan) => child.startMs >= parent.startMs && child.endMs <= parent.endMs;

describe('traces of runs, exported over OTLP/HTTP', () => {
  it('a run with a rate limit, a repair and a fallback: run, node, attempt and try spans in the GenAI conventions, no prompt or answer text', async () => {
    tracing = await startTracing({ version: '9.9.9-test' });
    expect(tracing).not.toBeNull();
    const { record, spans } = await tracedRun();

    const run = spans.find((s) => s.parentSpanId === '')!;
    expect(run).toMatchObject({
      name: 'invoke_workflow triage',
      kind: 1,
      scope: 'aqven',
      status: { code: 0 },
      attributes: {
        'gen_ai.operation.name': 'invoke_workflow',
        'gen_ai.workflow.name': 'triage',
        'aqven.run.id': record.id,
        'aqven.flow': 'triage',
        'aqven.run.status': 'succeeded',
      },
      resource: { 'service.name': 'aqven-under-test', 'service.version': '9.9.9-test' },
    });
    // the run record names the trace its spans are in
    expect(record.traceId).toBe(run.traceId);
    expect((await getRun<{ traceId?: string }>(record.id)).body.traceId).toBe(run.traceId);
    expect(spans.every((s) => s.traceId === run.traceId)).toBe(true);

    const nodes = childrenOf(spans, run);
    expect(nodes.map((n) => [n.name, n.attributes['aqven.node.id'], n.attributes['gen_ai.operation.name'], n.attributes['gen_ai.agent.name']])).toEqual([
      ['invoke_agent classifier', 'classify', 'invoke_agent', 'classifier'],
      ['invoke_agent writer', 'draft', 'invoke_agent', 'writer'],
    ]);
    const [classify, draft] = nodes as [ReceivedSpan, ReceivedSpan];
    expect(classify.attributes).toMatchObject({ 'aqven.node.status': 'succeeded', 'aqven.attempts': 3, 'aqven.turn': 1 });
    expect(within(classify, run) && within(draft, run)).toBe(true);

    const attempts = childrenOf(spans, classify).sort(bySeq);
    expect(attempts.map((a) => a.name)).toEqual([`chat ${FLASH_LITE}`, `chat ${FLASH_LITE}`, `chat ${GPT_OSS}`]);
    const [repaired, failed, answered] = attempts as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
    for (const a of attempts) {
      expect(a.kind).toBe(3); // client
      expect(within(a, classify)).toBe(true);
      expect(a.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openrouter',
        'aqven.run.id': record.id,
        'aqven.node.id': 'classify',
        'aqven.agent': 'classifier',
      });
      expect(a.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    }
    expect(repaired.attributes).toMatchObject({
      'gen_ai.request.model': FLASH_LITE,
      'gen_ai.response.model': FLASH_LITE,
      'gen_ai.response.finish_reasons': ['stop'],
      'aqven.model': `openrouter:${FLASH_LITE}`,
      'aqven.outcome': 'ok',
      'aqven.cause': 'invalid_output',
      'aqven.action': 'repair',
      'error.type': 'invalid_output',
      'aqven.answer_no': 1,
      'aqven.chain_index': 0,
      'aqven.tries': 2,
      'aqven.usage_unknown': false,
    });
    expect(repaired.status.code).toBe(2);
    expect(repaired.status.message).toContain('does not match the node');
    expect(failed.attributes).toMatchObject({
      'aqven.outcome': 'error',
      'aqven.cause': 'provider_error',
      'aqven.action': 'fallback',
      'error.type': 'provider_error',
      'aqven.answer_no': 2,
      'aqven.chain_index': 0,
    });
    expect(answered.attributes).toMatchObject({ 'gen_ai.request.model': GPT_OSS, 'aqven.outcome': 'ok', 'aqven.action': 'none', 'aqven.answer_no': 1, 'aqven.chain_index': 1 });
    expect(answered.attributes['error.type']).toBeUndefined();
    expect(answered.status.code).toBe(0);
    expect(answered.attributes['aqven.cost_usd']).toBeGreaterThan(0);

    // the rate limit: the first try answered 429 and paused the model; the second was sent after it
    const tries = childrenOf(spans, repaired);
    expect(tries.map((t) => [t.name, t.attributes['http.response.status_code'], t.attributes['aqven.try.no']])).toEqual([
      ['POST', 429, 1],
      ['POST', 200, 2],
    ]);
    const [limited, sent] = tries as [ReceivedSpan, ReceivedSpan];
    expect(limited).toMatchObject({ kind: 3, status: { code: 2 } });
    expect(limited.attributes).toMatchObject({ 'http.request.method': 'POST', 'error.type': '429', 'aqven.try.error': 'rate_limited', 'aqven.retry_after_ms': 50 });
    expect(limited.attributes).toMatchObject({ 'aqven.pause.asked_ms': 50, 'aqven.pause.server_wait': 'retry-after-ms: 50', 'aqven.pause.capped': false });
    expect(sent.attributes).toMatchObject({ 'http.request.resend_count': 1 });
    expect(sent.attributes['aqven.waited_ms']).toBeGreaterThanOrEqual(0);
    expect(sent.startMs).toBeGreaterThanOrEqual(limited.endMs);
    expect(tries.every((t) => within(t, repaired))).toBe(true);

    // the draft node's one attempt, one try
    const [draftAttempt] = childrenOf(spans, draft);
    expect(draftAttempt?.name).toBe(`chat ${GPT_OSS}`);
    expect(childrenOf(spans, draftAttempt!)).toHaveLength(1);

    // nothing the user wrote or the model answered, nor the collector's key
    const sent_ = receiver.bodies().join('\n');
    for (const text of ['charged twice', 'jane.doe', 'You sort support tickets', 'gen_ai.input.messages', 'gen_ai.output.messages', 'collector-secret-1'])
      expect(sent_).not.toContain(text);
    expect(receiver.headers().every((h) => h['x-collector-key'] === 'collector-secret-1')).toBe(true);
  }, 60_000);

  it("a traceparent on POST /api/runs: the run's span is a child of the caller's span, in its trace; a malformed one starts a trace of its own", async () => {
    tracing ??= await startTracing();
    const continued = await tracedRun({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(continued.record.traceId).toBe(CALLER_TRACE);
    const run = continued.spans.find((s) => s.name === 'invoke_workflow triage')!;
    expect(run).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    expect(continued.spans.filter((s) => s.traceId === CALLER_TRACE).length).toBeGreaterThan(5);

    const fresh = await tracedRun({ traceparent: `00-${CALLER_TRACE.toUpperCase()}-${CALLER_SPAN}-01` });
    const own = fresh.spans.find((s) => s.name === 'invoke_workflow triage')!;
    expect(own.parentSpanId).toBe('');
    expect(own.traceId).not.toBe(CALLER_TRACE);
    expect(fresh.record.traceId).toBe(own.traceId);
  }, 60_000);

  it(`with ${CAPTURE_CONTENT_ENV}=true the prompt and the answer are on the attempt spans, redacted`, async () => {
    await tracing?.shutdown();
    process.env[CAPTURE_CONTENT_ENV] = 'true';
    tracing = await startTracing();
    const { spans } = await tracedRun();
    const chat = spans.filter((s) => s.attributes['aqven.node.id'] === 'classify' && s.name.startsWith('chat ')).sort(bySeq);
    const first = chat[0]!.attributes;
    expect(JSON.parse(String(first['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: expect.stringContaining('You sort support tickets') }]);
    const input = String(first['gen_ai.input.messages']);
    expect(input).toContain('charged twice');
    expect(input).toContain('<EMAIL>');
    expect(input).not.toContain('jane.doe@example.com');
    expect(JSON.parse(input)[0]).toMatchObject({ role: 'user', parts: [{ type: 'text' }] });
    // the answer of the model that answered, as the conventions shape it
    const output = JSON.parse(String(chat[2]!.attributes['gen_ai.output.messages'])) as { role: string; finish_reason: string; parts: { content: string }[] }[];
    expect(output).toMatchObject([{ role: 'assistant', finish_reason: 'stop' }]);
    expect(JSON.parse(output[0]!.parts[0]!.content)).toHaveProperty('queue');
    expect(receiver.bodies().join('\n')).not.toContain('jane.doe');
  }, 60_000);
});
