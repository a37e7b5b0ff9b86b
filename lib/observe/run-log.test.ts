// The run lines (DESIGN: Observability, "Logs"): what a run's facts become in the log, told to the
// observer in the order a run tells them. A real run against the simulator, through the worker and
// in-process, is test/observe/logs.test.ts; here the facts are written out, so a failure text the
// engine would already have redacted can be handed over raw and shown to stay out of the log.
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import type { ObservedRun } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import type { RunRecord } from '@/lib/flow/run-record';
import { createLogger } from './logger';
import { runLogObserver } from './run-log';

const KEY = 'sk-test-run-log-7f3a9c1e2d';
// the run's database and project are not read by the run lines; no trace (tracing off)
const run = {
  runId: 'run-1',
  project: 'showcase',
  flow: 'triage',
  kind: 'flow',
  startedBy: 'token:ci',
  startedAt: 1_000,
  resumed: false,
  db: null,
  config: {} as ObservedRun['config'],
  agents: { classify: 'classifier' },
  parent: null,
  traceId: null,
} as ObservedRun;
const usage = { inputTokens: 120, outputTokens: 30, costUsd: 0.00042 };

const attempt = (o: Partial<AttemptRecord>): AttemptRecord => ({
  seq: 1,
  model: 'openrouter:google/gemini-2.5-flash-lite',
  chainIndex: 0,
  answerNo: 1,
  outcome: 'ok',
  finishReason: 'stop',
  cause: null,
  action: 'none',
  request: [{ role: 'user', content: 'Sort this ticket: my email is anna@example.com' }],
  responseText: null,
  error: null,
  validationErrors: [],
  discarded: false,
  streamedText: null,
  usage,
  startedAt: 1_000,
  finishedAt: 1_250,
  tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 1_000, finishedAt: 1_250 }],
  ...o,
});

// a provider's words as the engine got them, before its own scrubbing: the log must not rely on it
const raw = `Key ${KEY} is not allowed for anna@example.com`;
const failed = attempt({ outcome: 'error', cause: 'provider_error', action: 'fallback', error: { kind: 'provider_error', message: raw, detail: raw } });
const record = {
  id: 'run-1',
  flow: 'triage',
  status: 'failed',
  error: { code: 'provider_error', node: 'classify', message: raw, hint: '' },
  usage,
  usageUnknown: false,
  startedAt: new Date(1_000).toISOString(),
  finishedAt: new Date(3_500).toISOString(),
  nodes: [{ id: 'classify', attempts: [failed, attempt({ seq: 2 })] }],
} as unknown as RunRecord;

const events: ProgressEvent[] = [
  { type: 'run_start', runId: 'run-1', flow: 'triage' },
  { type: 'turn_start', turn: 1, nodes: ['classify'], at: 1_000 },
  { type: 'engine', node: 'classify', event: { type: 'try_start', nodeId: 'classify', seq: 1, tryNo: 1, at: 1_000 } },
  {
    type: 'engine',
    node: 'classify',
    event: {
      type: 'try_end',
      nodeId: 'classify',
      seq: 1,
      try: { tryNo: 1, status: 429, error: 'rate_limited', retryAfterMs: 2_000, waitedMs: 0, startedAt: 1_000, finishedAt: 1_010 },
    },
  },
  {
    type: 'engine',
    node: 'classify',
    event: {
      type: 'rate_limit_pause',
      model: 'google/gemini-2.5-flash-lite',
      pausedUntil: 3_010,
      reason: 'HTTP 429 from google/gemini-2.5-flash-lite',
      origin: { setAt: 1_010, serverWait: 'retry-after: 2', askedMs: 2_000, maxWaitMs: 60_000 },
    },
  },
  { type: 'engine', node: 'classify', event: { type: 'attempt_end', nodeId: 'classify', attempt: failed } },
  { type: 'engine', node: 'classify', event: { type: 'attempt_end', nodeId: 'classify', attempt: attempt({ seq: 2 }) } },
  {
    type: 'node_end',
    node: 'classify',
    result: { status: 'failed', output: null, error: { code: 'provider_error', message: raw, hint: '' }, usage, attempts: [failed], budget: { retries: 0, models: [] } },
    at: 1_300,
  },
  { type: 'node_skipped', node: 'draft', reason: 'classify failed', at: 1_300 },
  { type: 'run_end', record },
];

function told(env: Record<string, string | undefined> = {}) {
  const lines: string[] = [];
  const p = createLogger({ name: 'aqven worker', env, write: (l) => lines.push(l) });
  const watch = runLogObserver(p).watch(run);
  for (const e of events) watch?.event(e);
  return { lines, watch, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('the run lines', () => {
  it('a run started and ended, an attempt not ok, a rate-limit pause and a failed node; each with its run id and trace id', () => {
    const lines = told().json();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'run run-1 triage started'],
      ['warn', 'google/gemini-2.5-flash-lite paused for 2 s, until 1970-01-01T00:00:03.010Z: HTTP 429 from google/gemini-2.5-flash-lite'],
      ['info', 'classify: openrouter:google/gemini-2.5-flash-lite answer 1 error (provider_error), action fallback'],
      ['warn', 'classify failed: provider_error (last model openrouter:google/gemini-2.5-flash-lite)'],
      ['warn', 'run run-1 triage failed (provider_error at classify): 2 attempts, 2.5 s, $0.000420'],
    ]);
    for (const l of lines) expect(l).toMatchObject({ runId: 'run-1', traceId: null, name: 'aqven worker' });
    expect(lines[0]).toMatchObject({ flow: 'triage', kind: 'flow', project: 'showcase', startedBy: 'token:ci', resumed: false });
    expect(lines[1]).toMatchObject({ node: 'classify', model: 'google/gemini-2.5-flash-lite', pauseMs: 2_000, serverWait: 'retry-after: 2' });
    expect(lines[2]).toMatchObject({
      node: 'classify',
      model: 'openrouter:google/gemini-2.5-flash-lite',
      outcome: 'error',
      cause: 'provider_error',
      action: 'fallback',
      errorKind: 'provider_error',
      tries: 1,
      latencyMs: 250,
    });
    expect(lines[3]).toMatchObject({ node: 'classify', code: 'provider_error', attempts: 1, usage });
    expect(lines[4]).toMatchObject({ status: 'failed', durationMs: 2_500, attempts: 2, usage, usageUnknown: false, error: { code: 'provider_error', node: 'classify' } });
  });

  it("carry the run's trace id when tracing gave it one", () => {
    const lines: string[] = [];
    const traced = { ...run, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' } as ObservedRun;
    const watch = runLogObserver(createLogger({ name: 'aqven serve', env: {}, write: (l) => lines.push(l) })).watch(traced);
    for (const e of events) watch?.event(e);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ runId: 'run-1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
  });

  it('never a key or an email, even when the failure text reaches the log unredacted', () => {
    const { lines, json } = told({ OPENROUTER_API_KEY: KEY });
    const all = lines.join('');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain('anna@example.com');
    expect(json()[2]!.error).toBe('Key <REDACTED> is not allowed for <EMAIL>');
    // the prompt is no failure text: it is never written at all
    expect(all).not.toContain('Sort this ticket');
  });

  it('debug adds the failed tries and skipped nodes; silent and error watch nothing', () => {
    const debug = told({ AQVEN_LOG_LEVEL: 'debug' }).json();
    expect(debug.map((l) => l.msg)).toEqual(expect.arrayContaining(['classify: attempt 1 try 1 rate_limited (HTTP 429)', 'draft skipped']));
    expect(debug.find((l) => l.msg === 'classify skipped')).toBeUndefined(); // the skipped node is draft
    expect(debug.find((l) => l.msg === 'draft skipped')).toMatchObject({ level: 'debug', node: 'draft', reason: 'classify failed' });
    expect(told({ AQVEN_LOG_LEVEL: 'silent' }).watch).toBeNull();
    expect(told({ AQVEN_LOG_LEVEL: 'error' }).watch).toBeNull();
  });
});
