import { describe, expect, it } from 'vitest';
import type { NodePolicy } from '@/lib/engine/types';
import type { NodeFacts } from '@/lib/flow/run-record';
import { unstartedNodes, type FlowShape } from './flow-graph';
import { attemptSegments, chainModels, nodesByTurn, outcomeKey, placedTurn, runSpend, streamParts, timeAxis, type AttemptFacts } from './run-view';
import { attemptRecord } from '@/test/helpers/attempt-record';

const policy: NodePolicy = { chain: ['sim:a', 'sim:b', 'sim:c'], retries: 1, onError: 'fallback', onRefusal: 'fail', onTruncated: 'fail', strict: false };

const attempt = (seq: number, over: Partial<AttemptFacts> = {}): AttemptFacts => ({
  ...attemptRecord(seq, { model: 'sim:a', answerNo: 1, request: [], tries: [], startedAt: 1000, finishedAt: 1100 }),
  ...over,
});

function node(over: Partial<NodeFacts>): NodeFacts {
  return { id: 'classify', agent: 'classifier', turn: 1, status: 'succeeded', output: null, error: null, policy, attempts: [], startedAt: 1000, finishedAt: 2000, ...over };
}

describe('chainModels', () => {
  it('marks the model that gave the accepted answer, the ones that failed before it, and the rest untried', () => {
    const n = node({
      attempts: [attempt(1, { outcome: 'error', cause: 'provider_error', action: 'fallback', discarded: true }), attempt(2, { model: 'sim:b', chainIndex: 1 })],
    });
    expect(chainModels(n).map((m) => [m.model, m.state, m.answers, m.limit])).toEqual([
      ['sim:a', 'failed', 1, 2],
      ['sim:b', 'answered', 1, 2],
      ['sim:c', 'untried', 0, 2],
    ]);
  });

  it('answers nothing when the node failed, even after an ok answer that failed its checks', () => {
    const n = node({
      status: 'failed',
      attempts: [attempt(1, { cause: 'invalid_output', action: 'repair', discarded: true }), attempt(2, { cause: 'invalid_output' })],
    });
    expect(chainModels(n).map((m) => m.state)).toEqual(['failed', 'untried', 'untried']);
  });

  it('does not call a model failed while its first attempt is in flight', () => {
    const n = node({ status: 'running', attempts: [attempt(1, { outcome: null, finishedAt: null })] });
    expect(chainModels(n)[0]).toMatchObject({ state: 'untried', inFlight: true, answers: 1 });
  });
});

describe('runSpend', () => {
  it('counts dropped attempts apart from the total', () => {
    const s = runSpend({ nodes: [node({ attempts: [attempt(1, { action: 'retry', cause: 'truncated', outcome: 'truncated', discarded: true }), attempt(2)] })] });
    expect(s.total).toEqual({ inputTokens: 20, outputTokens: 10, costUsd: 0.002, usageUnknown: 0, unpriced: 0 });
    expect(s.dropped).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.001, attempts: 1, usageUnknown: 0 });
  });

  it('counts the attempts whose usage is unknown, so the totals read as a lower bound', () => {
    const cut = attempt(1, {
      action: 'fallback',
      cause: 'provider_error',
      outcome: 'error',
      discarded: true,
      usageUnknown: true,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    const s = runSpend({ nodes: [node({ attempts: [cut, attempt(2)] })] });
    expect(s.total).toMatchObject({ inputTokens: 10, usageUnknown: 1 });
    expect(s.dropped).toMatchObject({ attempts: 1, usageUnknown: 1 });
  });

  it('counts the attempts no price covers (an unpriced model): their cost is unknown, the total a lower bound', () => {
    const unpriced = attempt(1, { costSource: 'none' });
    const s = runSpend({ nodes: [node({ attempts: [unpriced, attempt(2, { costSource: 'catalogue' })] })] });
    expect(s.total).toMatchObject({ unpriced: 1 });
  });
});

describe('attemptSegments', () => {
  it('draws the waits between transport tries as gaps, a 429 wait as a rate-limit pause', () => {
    const a = attempt(1, {
      startedAt: 0,
      finishedAt: 4400,
      tries: [
        { tryNo: 1, status: 429, error: 'rate_limited', retryAfterMs: 2000, waitedMs: 0, startedAt: 0, finishedAt: 100 },
        { tryNo: 2, status: 429, error: 'rate_limited', retryAfterMs: 2000, waitedMs: 2000, startedAt: 2100, finishedAt: 2200 },
        { tryNo: 3, status: 200, error: null, retryAfterMs: null, waitedMs: 2000, startedAt: 4200, finishedAt: 4400 },
      ],
    });
    expect(attemptSegments(a, 5000).map((s) => [s.kind, s.start, s.end])).toEqual([
      ['try-failed', 0, 100],
      ['pause', 100, 2100],
      ['try-failed', 2100, 2200],
      ['pause', 2200, 4200],
      ['try', 4200, 4400],
    ]);
    expect(attemptSegments(a, 5000)[1]!.label).toContain('retry-after 2.0 s');
  });

  it('calls a wait after a server error a wait before retry', () => {
    const a = attempt(1, {
      startedAt: 0,
      tries: [
        { tryNo: 1, status: 503, error: 'server_error', retryAfterMs: null, waitedMs: 0, startedAt: 0, finishedAt: 50 },
        { tryNo: 2, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 550, finishedAt: 600 },
      ],
    });
    expect(attemptSegments(a, 1000)[1]).toMatchObject({ kind: 'wait', start: 50, end: 550 });
  });
});

describe('outcomeKey and nodesByTurn', () => {
  it('colours an ok answer that failed validation as invalid', () => {
    expect(outcomeKey({ outcome: 'ok', cause: 'invalid_output' })).toBe('invalid');
    expect(outcomeKey({ outcome: null, cause: null })).toBe('pending');
  });

  it('groups by turn, nodes never reached last', () => {
    const groups = nodesByTurn([node({ id: 'b', turn: 2 }), node({ id: 'x', turn: 0, status: 'skipped' }), node({ id: 'a', turn: 1 })]);
    expect(groups.map((g) => [g.kind, g.turn, g.nodes.map((n) => n.id)])).toEqual([
      ['turn', 1, ['a']],
      ['turn', 2, ['b']],
      ['not-reached', 0, ['x']],
    ]);
  });
});

describe('where a skipped node is placed', () => {
  // triage: classify fails in turn 1; draft (needs classify) is skipped before turn 2 starts, stored
  // with turn 1; manual_review (classify's on_fail) runs in turn 2
  const triage: FlowShape = {
    name: 'triage',
    nodes: [
      { id: 'classify', agent: 'classifier', needs: [], onFail: 'manual_review' },
      { id: 'draft', agent: 'writer', needs: ['classify'], onFail: null },
      { id: 'manual_review', agent: 'writer', needs: [], onFail: null },
    ],
  };
  const routed = [
    node({ id: 'classify', turn: 1, status: 'failed' }),
    node({ id: 'draft', agent: 'writer', turn: 1, status: 'skipped' }),
    node({ id: 'manual_review', agent: 'writer', turn: 2 }),
  ];

  it('shows a node skipped because its need failed in the turn it would have run, beside the route that ran instead — not in its need’s turn', () => {
    const groups = nodesByTurn(routed, { flow: triage, turns: 2 });
    expect(groups.map((g) => [g.kind, g.turn, g.nodes.map((n) => n.id)])).toEqual([
      ['turn', 1, ['classify']],
      ['turn', 2, ['draft', 'manual_review']],
    ]);
    // without the flow, one turn after the stored one
    expect(nodesByTurn(routed, { turns: 2 }).map((g) => g.nodes.map((n) => n.id))).toEqual([['classify'], ['draft', 'manual_review']]);
  });

  it('places a chain of skipped nodes one turn after another, and in "not reached" when the run ended before that turn', () => {
    // long-answer: draft fails in turn 1 with no on_fail: the run fails; critique, revise, final are skipped (stored turn 1)
    const flow: FlowShape = {
      name: 'long-answer',
      nodes: [
        { id: 'draft', agent: 'gpt', needs: [], onFail: null },
        { id: 'critique', agent: 'gpt', needs: ['draft'], onFail: null },
        { id: 'revise', agent: 'gpt', needs: ['draft', 'critique'], onFail: null },
      ],
    };
    const nodes = [node({ id: 'draft', status: 'failed' }), node({ id: 'critique', status: 'skipped' }), node({ id: 'revise', status: 'skipped' })];
    expect([...placedTurn(nodes, flow)]).toEqual([
      ['draft', 1],
      ['critique', 2],
      ['revise', 3],
    ]);
    expect(nodesByTurn(nodes, { flow, turns: 1 }).map((g) => [g.kind, g.nodes.map((n) => n.id)])).toEqual([
      ['turn', ['draft']],
      ['not-reached', ['critique', 'revise']],
    ]);
  });

  it('lists the flow’s nodes not started yet as pending while the run is live, as not reached once it ended', () => {
    const running = [node({ id: 'classify', status: 'running', finishedAt: null })];
    const all = [...running, ...unstartedNodes({ nodes: running }, triage)];
    expect(nodesByTurn(all, { flow: triage, turns: 1, live: true }).map((g) => [g.kind, g.nodes.map((n) => [n.id, n.status])])).toEqual([
      ['turn', [['classify', 'running']]],
      [
        'pending',
        [
          ['draft', 'pending'],
          ['manual_review', 'pending'],
        ],
      ],
    ]);
    expect(nodesByTurn(all, { flow: triage, turns: 1, live: false }).map((g) => g.kind)).toEqual(['turn', 'not-reached']);
  });
});

describe('streamParts', () => {
  it('strikes the text of a try that broke mid-stream and of a dropped attempt, keeps the answer', () => {
    const n = node({
      attempts: [
        attempt(1, { streamedText: 'Dear cust', discarded: true, action: 'retry', outcome: 'truncated', cause: 'truncated' }),
        attempt(2, {
          streamedText: 'Dear customer, thanks.',
          tries: [
            { tryNo: 1, status: 200, error: 'connection', retryAfterMs: null, waitedMs: 0, startedAt: 0, finishedAt: 10, discardedText: 'Dear cu' },
            { tryNo: 2, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 20, finishedAt: 30 },
          ],
        }),
      ],
    });
    expect(streamParts(n).map((p) => [p.text, p.discarded])).toEqual([
      ['Dear cust', true],
      ['Dear cu', true],
      ['Dear customer, thanks.', false],
    ]);
  });
});

describe('timeAxis', () => {
  const run = (startedAt: number, finishedAt: number) => ({ startedAt, finishedAt, nodes: [] });
  it('gives a run over in a few milliseconds several ticks, 0 first', () => {
    for (const span of [0, 1, 3, 7, 9]) {
      const { ticks } = timeAxis(run(1000, 1000 + span), 5000);
      expect(ticks.length, `a run of ${span} ms`).toBeGreaterThan(1);
      expect(ticks[0]).toEqual({ at: 1000, label: '0' });
    }
    expect(timeAxis(run(0, 7), 0).ticks.map((t) => t.label)).toEqual(['0', '1 ms', '2 ms', '3 ms', '4 ms', '5 ms', '6 ms', '7 ms']);
  });
  it('keeps at most nine ticks at a round step however long the run', () => {
    for (const span of [12, 95, 999, 4_321, 61_000, 7_200_000]) {
      const { ticks } = timeAxis(run(0, span), 0);
      expect(ticks.length, `a run of ${span} ms`).toBeGreaterThan(1);
      expect(ticks.length, `a run of ${span} ms`).toBeLessThanOrEqual(9);
    }
    expect(timeAxis(run(0, 61_000), 0).ticks.map((t) => t.label)).toEqual(['0', '10 s', '20 s', '30 s', '40 s', '50 s', '60 s']);
  });
});
