// The metrics' exposition (lib/observe/metrics.ts): what a run's facts, told to the observer, come
// to in Prometheus's text format — names, labels, values — and that labels stay bounded.
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, EngineEvent, TryRecord } from '@/lib/engine/types';
import type { ObservedRun } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import type { RunRecord } from '@/lib/flow/run-record';
import type { Project } from '@/lib/project';
import { redact } from '@/lib/redact';
import { samples } from '@/test/helpers/metrics-text';
import { OTHER } from './metric-labels';
import { createMetrics } from './metrics';

const FLASH = 'openrouter:google/gemini-2.5-flash-lite';
const GPT = 'openrouter:openai/gpt-oss-20b';
const RUN: ObservedRun = {
  runId: '01JRUNIDSHOULDNEVERSHOW',
  project: 'p',
  flow: 'triage',
  kind: 'flow',
  startedBy: null,
  startedAt: 0,
  resumed: false,
  db: null,
  config: {} as Project, // the metrics read neither
  agents: { classify: 'classifier', draft: 'writer' },
  parent: null,
  traceId: null,
};

const key = (name: string, labels: Record<string, string> = {}) => {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return l ? `${name}{${l}}` : name;
};

function tryRecord(tryNo: number, error: TryRecord['error'], status: number | null): TryRecord {
  return { tryNo, status, error, retryAfterMs: null, waitedMs: 0, startedAt: 0, finishedAt: 0 };
}

function attempt(o: Partial<AttemptRecord> & Pick<AttemptRecord, 'seq' | 'model' | 'outcome' | 'cause' | 'action'>): AttemptRecord {
  return {
    chainIndex: 0,
    answerNo: 1,
    finishReason: null,
    request: [],
    responseText: null,
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    startedAt: 0,
    finishedAt: 0,
    tries: [],
    ...o,
  };
}

const engine = (node: string, event: EngineEvent): ProgressEvent => ({ type: 'engine', node, event });

/** classify: the first model's 429 pauses it, its second try answers with an error and the node falls back; the second model answers. */
function triageRun(): ProgressEvent[] {
  const failed = attempt({
    seq: 1,
    model: FLASH,
    outcome: 'error',
    cause: 'provider_error',
    action: 'fallback',
    usage: { inputTokens: 120, outputTokens: 8, costUsd: 0.0000152 },
    startedAt: 1_000,
    finishedAt: 3_500,
  });
  const ok = attempt({
    seq: 2,
    model: GPT,
    chainIndex: 1,
    outcome: 'ok',
    cause: null,
    action: 'none',
    usage: { inputTokens: 130, outputTokens: 20, costUsd: 0.0000082 },
    startedAt: 3_500,
    finishedAt: 3_900,
  });
  const record = { id: RUN.runId, status: 'succeeded' } as RunRecord;
  return [
    { type: 'run_start', runId: RUN.runId, flow: 'triage' },
    { type: 'turn_start', turn: 1, nodes: ['classify'], at: 0 },
    engine('classify', { type: 'attempt_start', nodeId: 'classify', seq: 1, model: FLASH, chainIndex: 0, answerNo: 1, request: [], startedAt: 1_000 }),
    engine('classify', { type: 'try_start', nodeId: 'classify', seq: 1, tryNo: 1, at: 1_000 }),
    engine('classify', { type: 'try_end', nodeId: 'classify', seq: 1, try: tryRecord(1, 'rate_limited', 429) }),
    engine('classify', {
      type: 'rate_limit_pause',
      model: FLASH,
      pausedUntil: 3_000,
      reason: 'HTTP 429',
      origin: { setAt: 1_000, serverWait: '2', askedMs: 2_000, maxWaitMs: 60_000 },
    }),
    engine('classify', { type: 'try_end', nodeId: 'classify', seq: 1, try: tryRecord(2, null, 200) }),
    engine('classify', { type: 'attempt_end', nodeId: 'classify', attempt: failed }),
    engine('classify', { type: 'attempt_start', nodeId: 'classify', seq: 2, model: GPT, chainIndex: 1, answerNo: 1, request: [], startedAt: 3_500 }),
    engine('classify', { type: 'try_end', nodeId: 'classify', seq: 2, try: tryRecord(1, null, 200) }),
    engine('classify', { type: 'attempt_end', nodeId: 'classify', attempt: ok }),
    {
      type: 'node_end',
      node: 'classify',
      result: { status: 'succeeded', output: {}, error: null, usage: ok.usage, attempts: [failed, ok], budget: { retries: 0, models: [] } },
      at: 4_000,
    },
    { type: 'run_end', record },
  ];
}

function play(m: ReturnType<typeof createMetrics>, run: ObservedRun, events: ProgressEvent[]): void {
  const watch = m.observer.watch(run)!;
  for (const e of events) watch.event(e);
}

describe('the metrics of a run', () => {
  it('count attempts by provider, model, outcome, cause and action; tries, retries, pauses, tokens, cost, the run; nothing names the run', async () => {
    let t = 10_000;
    const m = createMetrics({ now: () => (t += 250) });
    play(m, RUN, triageRun());
    const { body, contentType } = await m.expose(null);
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const s = samples(body);
    const flash = { provider: 'openrouter', model: 'google/gemini-2.5-flash-lite' };
    const gpt = { provider: 'openrouter', model: 'openai/gpt-oss-20b' };
    expect(s.get(key('aqven_attempts_total', { ...flash, outcome: 'error', cause: 'provider_error', action: 'fallback' }))).toBe(1);
    expect(s.get(key('aqven_attempts_total', { ...gpt, outcome: 'ok', cause: 'none', action: 'none' }))).toBe(1);
    expect(s.get(key('aqven_transport_tries_total', { ...flash, result: 'rate_limited' }))).toBe(1);
    expect(s.get(key('aqven_transport_tries_total', { ...flash, result: 'ok' }))).toBe(1);
    expect(s.get(key('aqven_transport_tries_total', { ...gpt, result: 'ok' }))).toBe(1);
    expect(s.get(key('aqven_transport_retries_total', { ...flash, reason: 'rate_limited' }))).toBe(1);
    expect(s.has(key('aqven_transport_retries_total', { ...gpt, reason: 'rate_limited' }))).toBe(false);
    expect(s.get(key('aqven_rate_limit_pauses_total', flash))).toBe(1);
    expect(s.get(key('aqven_tokens_total', { ...flash, type: 'input' }))).toBe(120);
    expect(s.get(key('aqven_tokens_total', { ...gpt, type: 'output' }))).toBe(20);
    expect(s.get(key('aqven_cost_usd_total', flash))).toBeCloseTo(0.0000152, 12);
    // 2.5 s: counted from the 2.5 s bucket on (a bucket holds what is at most its bound)
    expect(s.get(key('aqven_attempt_duration_seconds_bucket', { le: '2.5', ...flash, outcome: 'error' }))).toBe(1);
    expect(s.get(key('aqven_attempt_duration_seconds_sum', { ...flash, outcome: 'error' }))).toBe(2.5);
    expect(s.get(key('aqven_attempt_duration_seconds_sum', { ...gpt, outcome: 'ok' }))).toBeCloseTo(0.4, 9);
    // the node: from its turn's start to its end, on the observer's clock (one tick of 250 ms)
    expect(s.get(key('aqven_node_duration_seconds_count', { flow: 'triage', node: 'classify', status: 'succeeded' }))).toBe(1);
    expect(s.get(key('aqven_node_duration_seconds_sum', { flow: 'triage', node: 'classify', status: 'succeeded' }))).toBe(0.25);
    expect(s.get(key('aqven_runs_total', { flow: 'triage', kind: 'flow', status: 'succeeded' }))).toBe(1);
    expect(body).not.toContain(RUN.runId);
    // no database: none of its gauges
    expect(body).not.toMatch(/^aqven_(database_up|rate_limit_paused|queue_jobs|workers_live)\b/m);
  });

  it('an interrupted attempt counts with outcome interrupted, its usage kept; two runs add up', async () => {
    const m = createMetrics();
    play(m, RUN, triageRun());
    play(m, { ...RUN, runId: 'second' }, [
      { type: 'turn_start', turn: 1, nodes: ['draft'], at: 0 },
      engine('draft', { type: 'attempt_start', nodeId: 'draft', seq: 1, model: GPT, chainIndex: 0, answerNo: 1, request: [], startedAt: 0 }),
      engine('draft', { type: 'attempt_interrupted', nodeId: 'draft', seq: 1, usage: { inputTokens: 40, outputTokens: 3, costUsd: 0.000002 }, usageUnknown: true }),
      { type: 'run_end', record: { id: 'second', status: 'interrupted' } as RunRecord },
    ]);
    const s = samples((await m.expose(null)).body);
    const gpt = { provider: 'openrouter', model: 'openai/gpt-oss-20b' };
    expect(s.get(key('aqven_attempts_total', { ...gpt, outcome: 'interrupted', cause: 'none', action: 'none' }))).toBe(1);
    expect(s.get(key('aqven_tokens_total', { ...gpt, type: 'input' }))).toBe(170);
    expect(s.get(key('aqven_attempts_usage_unknown_total', gpt))).toBe(1);
    expect(s.get(key('aqven_runs_total', { flow: 'triage', kind: 'flow', status: 'interrupted' }))).toBe(1);
    expect(s.get(key('aqven_runs_total', { flow: 'triage', kind: 'flow', status: 'succeeded' }))).toBe(1);
  });

  it('keeps at most the bound of distinct models, flows and nodes: the rest, and a model string that does not parse, read `other`', async () => {
    const m = createMetrics({ labelValuesMax: 2 });
    const models = ['a:m1', 'a:m2', 'a:m3', 'not a model string'];
    const events = models.flatMap((model, i): ProgressEvent[] => [
      engine('n', { type: 'attempt_start', nodeId: 'n', seq: i + 1, model, chainIndex: 0, answerNo: 1, request: [], startedAt: 0 }),
      engine('n', { type: 'attempt_end', nodeId: 'n', attempt: attempt({ seq: i + 1, model, outcome: 'ok', cause: null, action: 'none' }) }),
    ]);
    play(m, RUN, events);
    for (const flow of ['f1', 'f2', 'f3']) play(m, { ...RUN, flow }, [{ type: 'run_end', record: { id: 'x', status: 'failed' } as RunRecord }]);
    const s = samples((await m.expose(null)).body);
    const ok = { outcome: 'ok', cause: 'none', action: 'none' };
    expect(s.get(key('aqven_attempts_total', { provider: 'a', model: 'm1', ...ok }))).toBe(1);
    expect(s.get(key('aqven_attempts_total', { provider: 'a', model: 'm2', ...ok }))).toBe(1);
    expect(s.get(key('aqven_attempts_total', { provider: 'a', model: OTHER, ...ok }))).toBe(1);
    expect(s.get(key('aqven_attempts_total', { provider: OTHER, model: OTHER, ...ok }))).toBe(1);
    // triage and f1 are the two flows kept
    expect(s.get(key('aqven_runs_total', { flow: OTHER, kind: 'flow', status: 'failed' }))).toBe(2);
  });

  it("counts the redactor's replacements by kind, every detector listed from zero", async () => {
    const m = createMetrics();
    const before = samples((await m.expose(null)).body);
    for (const kind of ['email', 'iban', 'card', 'phone', 'ip']) expect(before.has(key('aqven_redactions_total', { kind })), kind).toBe(true);
    expect(redact('write to anna@example.com or bob@example.org from 10.0.0.7')).toBe('write to <EMAIL> or <EMAIL> from <IP>');
    const after = samples((await m.expose(null)).body);
    const grew = (kind: string) => after.get(key('aqven_redactions_total', { kind }))! - before.get(key('aqven_redactions_total', { kind }))!;
    expect([grew('email'), grew('ip'), grew('card'), grew('phone'), grew('iban')]).toEqual([2, 1, 0, 0, 0]);
  });
});
