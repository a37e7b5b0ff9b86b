// The what-if estimate against cases worked out by hand: the engine's decide() walks each node,
// the history supplies every answer, the seed makes it repeatable.
import { describe, expect, it } from 'vitest';
import type { HistoryAttempt, HistoryNode } from '@/db/what-if-queries';
import type { NodePolicy } from '@/lib/engine/types';
import { attemptKind, measure, THIN_ATTEMPTS, whatIf, wilson, type AttemptKind } from './what-if';

const A = 'sim:a';
const B = 'sim:b';
const C = 'sim:c';

const ATTEMPT: Record<AttemptKind, Pick<HistoryAttempt, 'outcome' | 'cause' | 'errorKind'>> = {
  ok: { outcome: 'ok', cause: null, errorKind: null },
  invalid: { outcome: 'ok', cause: 'invalid_output', errorKind: 'invalid_output' },
  error: { outcome: 'error', cause: 'provider_error', errorKind: 'provider_error' },
  client_error: { outcome: 'error', cause: 'provider_error', errorKind: 'client_error' },
  not_sent: { outcome: 'error', cause: 'provider_error', errorKind: 'not_sent' },
  refusal: { outcome: 'refusal', cause: 'refusal', errorKind: 'refusal' },
  truncated: { outcome: 'truncated', cause: 'truncated', errorKind: 'truncated' },
};

type Step = [model: string, kind: AttemptKind, cost?: number, ms?: number];
let ids = 0;
/** `count` nodes that each answered `steps` in order, then ended `status`. */
function nodes(count: number, steps: Step[], status: 'succeeded' | 'failed' = 'succeeded', policy: NodePolicy | null = null): HistoryNode[] {
  return Array.from({ length: count }, () => {
    const id = `n${++ids}`;
    return {
      id,
      runId: `r${id}`,
      nodeId: 'classify',
      status,
      policy,
      startedAt: ids,
      attempts: steps.map(([model, kind, cost = 0.001, ms = 100], i) => ({ seq: i + 1, model, ...ATTEMPT[kind], costUsd: cost, durationMs: ms })),
    };
  });
}

const policy = (over: Partial<NodePolicy> = {}): NodePolicy => ({ chain: [A], retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict: false, ...over });
// fewer simulated nodes than the page uses: the cases below stay within their tolerance
const FAST = { nodes: 20_000, resamples: 100, nodesPerResample: 1_000 };
const run = (history: HistoryNode[], draft: NodePolicy, today: NodePolicy | null = null) => whatIf({ agent: 'classifier', window: 200, history, draft, today, options: FAST });

describe('the estimate replays the history through decide()', () => {
  it('chain [A, B], A always errors under on_error fallback, B always ok: 100%, 2 answers, cost A + B', () => {
    const history = nodes(30, [
      [A, 'error', 0.002, 300],
      [B, 'ok', 0.005, 700],
    ]);
    const r = run(history, policy({ chain: [A, B], onError: 'fallback' }));
    expect(r.draft!.success).toEqual({ value: 1, low: 1, high: 1 });
    expect(r.draft!.answers.value).toBe(2);
    expect(r.draft!.costUsd.value).toBeCloseTo(0.007, 12);
    expect(r.draft!.p95LatencyMs.value).toBe(1000);
    expect(r.draft!.unknown.value).toBe(0);
  });

  it('the same chain under on_error retry never reaches B: A spends its retries + 1 answers and the node fails', () => {
    const history = nodes(30, [
      [A, 'error'],
      [B, 'ok'],
    ]);
    const r = run(history, policy({ chain: [A, B], retries: 2, onError: 'retry' }));
    expect(r.draft!.success.value).toBe(0);
    expect(r.draft!.answers.value).toBe(3);
  });

  it('A answers invalid half the time, output.retries 1: one repair → success 1 − ½·½ = 75%', () => {
    // as nodes under retries 1 record it: 30 invalid and 30 ok answers
    const history = [
      ...nodes(
        10,
        [
          [A, 'invalid'],
          [A, 'invalid'],
        ],
        'failed',
      ),
      ...nodes(10, [
        [A, 'invalid'],
        [A, 'ok'],
      ]),
      ...nodes(20, [[A, 'ok']]),
    ];
    const r = run(history, policy({ retries: 1 }));
    expect(r.draft!.success.value).toBeCloseTo(0.75, 1);
    expect(Math.abs(r.draft!.success.value - 0.75)).toBeLessThan(0.015);
    expect(Math.abs(r.draft!.answers.value - 1.5)).toBeLessThan(0.02);
    // the hand-computed figure is inside the interval, and the interval is a real range
    expect(r.draft!.success.low).toBeLessThanOrEqual(0.75);
    expect(r.draft!.success.high).toBeGreaterThanOrEqual(0.75);
    expect(r.draft!.success.high - r.draft!.success.low).toBeGreaterThan(0.05);
    // retries 0: the invalid answer cannot be repaired
    expect(Math.abs(run(history, policy({ retries: 0 })).draft!.success.value - 0.5)).toBeLessThan(0.015);
  });

  it('on_error fail → success = P(ok); today’s retry (retries 1) → 1 − P(error)²', () => {
    // A: 15 errors, 35 ok answers = P(ok) 0.7
    const history = [
      ...nodes(15, [
        [A, 'error'],
        [A, 'ok'],
      ]),
      ...nodes(20, [[A, 'ok']]),
    ];
    const today = policy({ onError: 'retry', retries: 1 });
    const r = run(history, policy({ onError: 'fail' }), today);
    expect(Math.abs(r.draft!.success.value - 0.7)).toBeLessThan(0.015);
    expect(Math.abs(r.today!.success.value - 0.91)).toBeLessThan(0.015);
    // measured: every node succeeded, 50 answers over 35 nodes
    expect(r.measured).toMatchObject({ nodes: 35, answers: 50 / 35 });
    expect(r.measured!.success.value).toBe(1);
  });

  it('a client error is not resent by on_error retry, but may fall back (the engine’s rule, not a copy of it)', () => {
    const history = [
      ...nodes(30, [
        [A, 'client_error'],
        [B, 'ok'],
      ]),
    ];
    expect(run(history, policy({ chain: [A, B], onError: 'retry', retries: 3 })).draft!).toMatchObject({ success: { value: 0 }, answers: { value: 1 } });
    expect(run(history, policy({ chain: [A, B], onError: 'fallback' })).draft!.success.value).toBe(1);
  });

  it('refusals follow on_refusal: fail stops the node, retry asks again within the budget', () => {
    // A refuses 1 in 2
    const history = [...nodes(20, [[A, 'refusal']], 'failed'), ...nodes(20, [[A, 'ok']])];
    expect(Math.abs(run(history, policy({ onRefusal: 'fail' })).draft!.success.value - 0.5)).toBeLessThan(0.015);
    expect(Math.abs(run(history, policy({ onRefusal: 'retry', retries: 2 })).draft!.success.value - 0.875)).toBeLessThan(0.015);
  });

  it('the fixed seed gives identical results twice; another seed gives other draws', () => {
    const history = [
      ...nodes(25, [
        [A, 'invalid'],
        [A, 'ok'],
      ]),
      ...nodes(10, [
        [A, 'error'],
        [A, 'ok'],
      ]),
    ];
    const a = run(history, policy({ retries: 2 }));
    const b = run(history, policy({ retries: 2 }));
    expect(b).toEqual(a);
    const c = whatIf({ agent: 'classifier', window: 200, history, draft: policy({ retries: 2 }), today: null, options: { ...FAST, seed: 99 } });
    expect(c.draft!.success.value).not.toBe(a.draft!.success.value);
  });

  it('more history, a narrower interval', () => {
    const small = [
      ...nodes(10, [
        [A, 'invalid'],
        [A, 'ok'],
      ]),
      ...nodes(10, [[A, 'ok']]),
    ];
    const large = [
      ...nodes(200, [
        [A, 'invalid'],
        [A, 'ok'],
      ]),
      ...nodes(200, [[A, 'ok']]),
    ];
    const width = (h: HistoryNode[]) => {
      const s = run(h, policy({ retries: 0 })).draft!.success;
      return s.high - s.low;
    };
    expect(width(large)).toBeLessThan(width(small) / 2);
  });
});

describe('what the history cannot tell', () => {
  it('flags a draft model with fewer than THIN_ATTEMPTS attempts as thin, and one with none as missing', () => {
    const history = [
      ...nodes(THIN_ATTEMPTS - 5, [[A, 'ok']]),
      ...nodes(5, [
        [A, 'error'],
        [B, 'ok'],
      ]),
    ];
    const r = run(history, policy({ chain: [A, B, C], onError: 'fallback' }));
    expect(r.thinModels).toEqual([B]);
    expect(r.missingModels).toEqual([C]);
    expect(r.models.map((m) => [m.model, m.attempts, m.thin])).toEqual([
      [A, THIN_ATTEMPTS, false],
      [B, 5, true],
      [C, 0, true],
    ]);
  });

  it('a node that would reach a model without history is unknown, not a success or a failure', () => {
    // A errors 1 in 4; C has never answered for this agent
    const history = [
      ...nodes(10, [
        [A, 'error'],
        [A, 'ok'],
      ]),
      ...nodes(20, [[A, 'ok']]),
    ];
    const r = run(history, policy({ chain: [A, C], onError: 'fallback' }));
    expect(r.missingModels).toEqual([C]);
    expect(Math.abs(r.draft!.unknown.value - 0.25)).toBeLessThan(0.015);
    expect(Math.abs(r.draft!.success.value - 0.75)).toBeLessThan(0.015);
  });

  it('no history: nothing to estimate, and the draft chain is all missing', () => {
    const r = run([], policy({ chain: [A, B], onError: 'fallback' }));
    expect(r).toMatchObject({ nodes: 0, measured: null, draft: null, missingModels: [A, B] });
  });

  it('leaves out nodes with an attempt cut off, and counts nodes run under another policy', () => {
    const today = policy();
    const cut = nodes(2, [[A, 'ok']], 'failed');
    cut.forEach((n) => (n.attempts[0] = { ...n.attempts[0]!, outcome: null }));
    const history = [...nodes(3, [[A, 'ok']], 'succeeded', today), ...nodes(4, [[A, 'ok']], 'succeeded', { ...today, retries: 3 }), ...cut];
    const r = run(history, today, today);
    expect(r).toMatchObject({ nodes: 7, leftOut: 2, otherPolicy: 4 });
  });
});

describe('the pieces', () => {
  it('attemptKind reads outcome, cause and error kind', () => {
    expect((Object.keys(ATTEMPT) as AttemptKind[]).map((k) => attemptKind(ATTEMPT[k]))).toEqual(Object.keys(ATTEMPT));
    expect(attemptKind({ outcome: 'error', cause: 'provider_error', errorKind: 'transport' })).toBe('error');
    expect(attemptKind({ outcome: null, cause: null, errorKind: 'transport' })).toBeNull();
  });

  it("wilson's interval: 15 of 20", () => {
    const w = wilson(15, 20);
    expect(w.value).toBe(0.75);
    expect(w.low).toBeCloseTo(0.531, 3);
    expect(w.high).toBeCloseTo(0.888, 3);
    expect(wilson(20, 20).high).toBe(1);
  });

  it('measure: success, answers, cost and the nearest-rank p95 of node latency', () => {
    const list = Array.from({ length: 20 }, (_, i) => ({ succeeded: i < 15, attempts: [{ costUsd: 0.01, durationMs: (i + 1) * 10 }] }));
    expect(measure(list)).toMatchObject({ nodes: 20, answers: 1, p95LatencyMs: 190 });
    expect(measure(list)!.costUsd).toBeCloseTo(0.01, 12);
    expect(measure(list)!.success.value).toBe(0.75);
  });
});
