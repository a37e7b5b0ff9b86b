import { describe, expect, it } from 'vitest';
import { collapseRepeats, failedOnly, seqRange } from './attempt-groups';
import type { AttemptFacts } from './run-view';
import { attemptRecord } from '@/test/helpers/attempt-record';

const attempt = (seq: number, over: Partial<AttemptFacts> = {}): AttemptFacts => ({
  ...attemptRecord(seq, { model: 'sim:a', request: [], tries: [], startedAt: seq * 100, finishedAt: seq * 100 + 50 }),
  ...over,
});

const invalid = (seq: number, over: Partial<AttemptFacts> = {}) =>
  attempt(seq, {
    cause: 'invalid_output',
    action: 'repair',
    discarded: true,
    error: { kind: 'invalid_output', message: "sim:a's answer does not match the node's output schema: /queue must be one of billing, tech, sales", detail: '{}' },
    validationErrors: [{ pointer: '/queue', message: 'must be one of billing, tech, sales' }],
    // repeats differ in what a reader does not compare at a glance: usage and times
    usage: { inputTokens: 10 + seq, outputTokens: 5, costUsd: 0.001 * seq },
    ...over,
  });

describe('collapseRepeats', () => {
  it('folds five identical invalid_output attempts in a row into one group of five, and keeps the different ones apart', () => {
    const attempts = [
      attempt(1, { outcome: 'error', cause: 'provider_error', action: 'retry', error: { kind: 'provider_error', message: 'boom', detail: null } }),
      ...[2, 3, 4, 5, 6].map((s) => invalid(s)),
      invalid(7, { action: 'fallback' }),
      attempt(8, { model: 'sim:b', chainIndex: 1 }),
    ];
    const groups = collapseRepeats(attempts);
    expect(groups.map((g) => [seqRange(g), g.attempts.length])).toEqual([
      ['#1', 1],
      ['#2–#6', 5],
      ['#7', 1],
      ['#8', 1],
    ]);
  });

  it('does not fold attempts whose errors differ, nor an attempt still in flight', () => {
    const groups = collapseRepeats([
      invalid(1),
      invalid(2, { validationErrors: [{ pointer: '/confidence', message: 'must be <= 1' }] }),
      attempt(3, { outcome: null, finishedAt: null }),
      attempt(4, { outcome: null, finishedAt: null }),
    ]);
    expect(groups.map((g) => g.attempts.length)).toEqual([1, 1, 1, 1]);
  });

  it('keeps a group key stable while a live run adds attempts after it', () => {
    const before = collapseRepeats([invalid(1), invalid(2)]);
    const after = collapseRepeats([invalid(1), invalid(2), invalid(3), attempt(4, { outcome: null, finishedAt: null })]);
    expect(before[0]!.key).toBe(1);
    expect(after.map((g) => [g.key, g.attempts.length])).toEqual([
      [1, 3],
      [4, 1],
    ]);
  });
});

describe('failedOnly', () => {
  it('hides the ok answers, keeps every failure (an ok answer that failed its checks included) and the attempt in flight', () => {
    const shown = failedOnly([attempt(1), invalid(2), attempt(3, { outcome: 'truncated', cause: 'truncated' }), attempt(4, { outcome: null, finishedAt: null }), attempt(5)]);
    expect(shown.map((a) => a.seq)).toEqual([2, 3, 4]);
  });
});
