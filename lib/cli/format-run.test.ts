// The text `aqven run`, `show` and `runs` print (DESIGN: CLI): what a reader of the terminal sees of
// a try cut off after its headers, of a run's short id, and of a provider's text holding escape codes.
import { describe, expect, it } from 'vitest';
import type { RunListItem } from '@/db/queries';
import type { RunRecord } from '@/lib/flow/run-record';
import { formatRun, formatRunList, LiveProgress } from './format-run';
import { printable } from './printable';

const ID = '0192f0c4-5e6a-7b8c-9d0e-a1b2c3d4e5f6';
const EVIL = '\u001b[31mRED\u001b]0;pwned\u0007';

function record(attempt: Record<string, unknown>, error: RunRecord['error'] = null): RunRecord {
  return {
    id: ID,
    flow: 'triage',
    kind: 'flow',
    replayOf: null,
    replayNode: null,
    status: error ? 'failed' : 'succeeded',
    input: {},
    output: error ? null : { ok: true },
    error,
    usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    usageUnknown: false,
    startedAt: '2026-12-01T12:00:00.000Z',
    finishedAt: '2026-12-01T12:00:01.000Z',
    startedBy: null,
    projectHash: null,
    snapshotId: null,
    nodes: [
      {
        id: 'classify',
        agent: 'classifier',
        status: error ? 'failed' : 'succeeded',
        turn: 1,
        error: null,
        budget: { retries: 1, models: [{ model: 'openrouter:m', answers: 1, limit: 2 }] },
        attempts: [
          {
            seq: 1,
            model: 'openrouter:m',
            chainIndex: 0,
            answerNo: 1,
            outcome: 'error',
            cause: 'transport',
            action: 'retry',
            latencyMs: 5,
            error: null,
            transport: [],
            request: [],
            ...attempt,
          },
        ],
      },
    ],
  } as unknown as RunRecord;
}

const listItem = (over: Partial<RunListItem> = {}): RunListItem => ({
  id: ID,
  flow: 'triage',
  status: 'succeeded',
  errorCode: null,
  errorNode: null,
  turns: 1,
  inputTokens: 1,
  outputTokens: 1,
  costUsd: 0,
  startedAt: Date.parse('2026-12-01T12:00:00Z'),
  finishedAt: null,
  attempts: 1,
  kind: 'flow',
  replayOf: null,
  replayNode: null,
  routedAround: false,
  ...over,
});

describe('formatRun', () => {
  it('prints a try cut off after a 200 as both its status and its error', () => {
    const text = formatRun(
      record({
        transport: [
          { tryNo: 1, status: 200, error: 'connection', retryAfterMs: null },
          { tryNo: 2, status: 503, error: null, retryAfterMs: 1000 },
          { tryNo: 3, status: null, error: 'timeout', retryAfterMs: null },
        ],
      }),
    );
    expect(text).toContain('tries: 200 connection, 503 retry-after 1000ms, timeout');
  });

  it('a run with attempts whose usage is unknown prints its cost as a lower bound, counting them', () => {
    const r = record({ outcome: 'ok', cause: null, action: 'none', usageUnknown: true });
    r.usageUnknown = true;
    r.usage = { inputTokens: 12, outputTokens: 3, costUsd: 0.00012 };
    const head = formatRun(r).split('\n')[0]!;
    expect(head).toContain('tokens ≥ 12 in / 3 out  cost ≥ $0.000120 (1 attempt without usage)');
    expect(formatRun(r)).toMatch(/#1 openrouter:m .*usage unknown/);
  });

  it('an attempt with tokens nobody priced says its cost is unknown, and the run total is a lower bound', () => {
    const r = record({ outcome: 'ok', cause: null, action: 'none', usage: { inputTokens: 12, outputTokens: 3, costUsd: 0 }, costSource: 'none', reasoningTokens: 2 });
    r.usage = { inputTokens: 12, outputTokens: 3, costUsd: 0 };
    const text = formatRun(r);
    expect(text.split('\n')[0]).toContain('cost ≥ $0.000000 (1 attempt without a price)');
    expect(text).toMatch(/#1 openrouter:m .* cost unknown \(unpriced\)/);
    expect(text).toMatch(/#1 openrouter:m .* 2 reasoning tokens/);
  });

  it('shows the escape codes of a provider error as \\u{…}, on its own line', () => {
    const text = formatRun(
      record({ error: { kind: 'provider', message: `${EVIL}\nsecond line` } }, {
        code: 'provider_error',
        node: 'classify',
        message: EVIL,
        hint: `try\u0008\u0008\u0008 again`,
      } as RunRecord['error']),
    );
    expect(text).toContain('[provider: \\u{001B}[31mRED\\u{001B}]0;pwned\\u{0007}\\u{000A}second line]');
    expect(text).toContain('error provider_error at node classify: \\u{001B}[31mRED');
    expect(text).toContain('hint: try\\u{0008}\\u{0008}\\u{0008} again');
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it('says which answer of the model it was and its place in the chain; a not-sent attempt is no answer', () => {
    expect(formatRun(record({ answerNo: 2, chainIndex: 0 }))).toContain('action retry  answer 2/2 · chain 0  ');
    expect(formatRun(record({ answerNo: 1, chainIndex: 1 }))).toContain('answer 1 · chain 1');
    expect(formatRun(record({ error: { kind: 'not_sent', message: 'paused' } }))).toContain('action retry  not sent, no answer · chain 0  ');
  });

  it('puts the native finish reason beside the outcome when it says something else than the finish reason', () => {
    expect(formatRun(record({ outcome: 'refusal', finishReason: 'stop', nativeFinishReason: 'SAFETY' }))).toContain('#1 openrouter:m  refusal (stop, native SAFETY)  ');
    expect(formatRun(record({ outcome: 'ok', finishReason: 'stop', nativeFinishReason: 'STOP' }))).toContain('#1 openrouter:m  ok (stop)  ');
    expect(formatRun(record({ outcome: 'truncated', finishReason: null, nativeFinishReason: 'MAX_TOKENS' }))).toContain('#1 openrouter:m  truncated (native MAX_TOKENS)  ');
  });

  it('counts the streamed text a try dropped, and says where it and the requests are, printing neither', () => {
    const text = formatRun(
      record({
        transport: [
          { try: 1, status: 200, error: 'server_error', retryAfterMs: null, discardedText: 'héllo \u001b' },
          { try: 2, status: 200, error: null, retryAfterMs: null, discardedText: null },
        ],
        request: [{ role: 'user', content: 'the prompt' }],
      }),
    );
    expect(text).toContain('tries: 200 server_error (dropped 7 chars of streamed text), 200');
    expect(text).not.toContain('héllo');
    expect(text).not.toContain('the prompt');
    expect(text.split('\n').at(-1)).toBe('requests as sent and dropped streamed text: aqven show a1b2c3d4 --json');
    expect(formatRun(record({})).split('\n').at(-1)).toBe('requests as sent: aqven show a1b2c3d4 --json');
  });

  it('prints the message and hint of a failed node an on_fail route went around, once for the node the run failed at', () => {
    const routed = record({});
    routed.nodes[0]!.status = 'failed';
    routed.nodes[0]!.error = { code: 'refusal', message: 'openrouter:m refused to answer', hint: 'Set output.on_refusal to "fallback"' };
    const text = formatRun(routed).split('\n');
    const at = text.findIndex((l) => l.startsWith('  turn 1  classify (classifier)  failed  refusal'));
    expect(text.slice(at + 2, at + 4)).toEqual(['    refusal: openrouter:m refused to answer', '    hint: Set output.on_refusal to "fallback"']);

    const failed = record({}, { code: 'refusal', node: 'classify', message: 'openrouter:m refused to answer', hint: 'Set output.on_refusal' });
    failed.nodes[0]!.status = 'failed';
    failed.nodes[0]!.error = { code: 'refusal', message: 'openrouter:m refused to answer', hint: 'Set output.on_refusal' };
    const once = formatRun(failed);
    expect(once.match(/hint: /g)).toHaveLength(1);
    expect(once).toContain('error refusal at node classify: openrouter:m refused to answer');
  });

  it('escapes C1 controls JSON leaves raw in an output', () => {
    const r = record({});
    r.output = { text: 'a\u009b31mb\u007f' };
    expect(formatRun(r)).toContain('output: {"text":"a\\u{009B}31mb\\u{007F}"}');
  });
});

describe('formatRunList', () => {
  it('shows each run by its short id — the random end of its id, what `aqven show` takes — next to the full id', () => {
    const line = formatRunList([listItem()]);
    expect(line.startsWith('2026-12-01T12:00:00.000Z  a1b2c3d4  0192f0c4-5e6a-7b8c-9d0e-a1b2c3d4e5f6  triage')).toBe(true);
  });

  it('escapes a stored flow name or error code', () => {
    expect(formatRunList([listItem({ flow: `x${EVIL}`, errorCode: 'e\u001b[2J', errorNode: 'n' })])).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });
});

describe('printable', () => {
  it('keeps the line breaks and tabs of a block, and escapes them in a line', () => {
    expect(printable('a\tb\nc\r', { block: true })).toBe('a\tb\nc\\u{000D}');
    expect(printable('a\tb\nc')).toBe('a\\u{0009}b\\u{000A}c');
    expect(printable('plain, ünïcode, 日本')).toBe('plain, ünïcode, 日本');
  });
});

describe('LiveProgress', () => {
  /** the lines left on screen: each draw moves up over the last one and rewrites every line */
  const screen = (draw: (p: LiveProgress) => void) => {
    let last = '';
    const p = new LiveProgress({ write: (s: string) => void (last = s) } as never);
    draw(p);
    return last
      .replace(/\x1b\[\d*A/, '')
      .replace(/\x1b\[2K/g, '')
      .trimEnd()
      .split('\n');
  };
  const tries = [{ tryNo: 1, status: 429, error: 'rate_limited' as const, retryAfterMs: 1000, waitedMs: 0, startedAt: 1, finishedAt: 2 }];
  const attempt = {
    seq: 1,
    model: 'sim:m',
    chainIndex: 0,
    answerNo: 1,
    outcome: 'ok' as const,
    finishReason: 'stop',
    cause: 'invalid_output' as const,
    action: 'repair' as const,
    request: [],
    responseText: 'x',
    error: null,
    validationErrors: [],
    discarded: true,
    streamedText: null,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    startedAt: 1,
    finishedAt: 3,
    tries,
  };

  it("draws a followed run's events as aqven run draws its own run", () => {
    const own = screen((p) => {
      p.onProgress({
        type: 'engine',
        node: 'classify',
        event: { type: 'attempt_start', nodeId: 'classify', seq: 1, model: 'sim:m', chainIndex: 0, answerNo: 1, request: [], startedAt: 1 },
      });
      p.onProgress({ type: 'engine', node: 'classify', event: { type: 'try_end', nodeId: 'classify', seq: 1, try: tries[0]! } });
      p.onProgress({ type: 'engine', node: 'draft', event: { type: 'attempt_end', nodeId: 'draft', attempt } });
    });
    const followed = screen((p) => {
      p.onRunEvent({ type: 'attempt.started', data: { node: 'classify', ...attempt, outcome: null, finishedAt: null } });
      p.onRunEvent({ type: 'attempt.try', data: { node: 'classify', seq: 1, try: tries[0]! } });
      p.onRunEvent({ type: 'attempt.ended', data: { node: 'draft', ...attempt } });
    });
    expect(followed).toEqual(own);
    expect(own).toEqual(['  classify  attempt 1  try 1: 429 rate_limited, waiting 1000ms', '  draft  attempt 1  sim:m  ok → repair']);
  });
});
