import { describe, expect, it } from 'vitest';
import { beginAttempt, decide, INITIAL_STATE, type Decision, type PolicyState, type Verdict } from './policy';
import type { NodePolicy } from './types';

const FILE = 'agents/classifier.yaml';
const base: NodePolicy = {
  chain: ['p:primary', 'p:fallback'],
  retries: 1,
  onError: 'retry',
  onRefusal: 'fail',
  onTruncated: 'fail',
  strict: false,
};
const pol = (over: Partial<NodePolicy> = {}): NodePolicy => ({ ...base, ...over });

const ok: Verdict = { outcome: 'ok', valid: true };
const invalid: Verdict = { outcome: 'ok', valid: false };
const error: Verdict = { outcome: 'error', resendable: true };
const clientError: Verdict = { outcome: 'error', resendable: false };
const refusal: Verdict = { outcome: 'refusal', resendable: true };
const truncated: Verdict = { outcome: 'truncated', resendable: true };

/** Plays verdicts through the machine the way callNode does; returns every decision. */
function play(policy: NodePolicy, verdicts: Verdict[]): { decisions: Decision[]; states: PolicyState[] } {
  let state = INITIAL_STATE;
  const decisions: Decision[] = [];
  const states: PolicyState[] = [];
  for (const v of verdicts) {
    state = beginAttempt(state);
    states.push(state);
    const d = decide(policy, FILE, state, v);
    decisions.push(d);
    if (d.kind === 'succeed' || d.kind === 'fail') break;
    state = d.next;
  }
  return { decisions, states };
}
const kinds = (ds: Decision[]) => ds.map((d) => d.kind);

describe('policy: one row per sentence of the seed page', () => {
  // [row, policy overrides, verdicts, expected decision kinds, expected last code/cause]
  it.each([
    ['ok and valid → the node succeeds, action none', {}, [ok], ['succeed'], null],
    ['ok but invalid → repair, then valid → succeed', {}, [invalid, ok], ['repair', 'succeed'], null],
    ['ok but invalid twice with retries 1 → invalid_output', {}, [invalid, invalid], ['repair', 'fail'], 'invalid_output'],
    ['on_error defaults to retry', {}, [error, ok], ['retry', 'succeed'], null],
    ['on_refusal defaults to fail', {}, [refusal], ['fail'], 'refusal'],
    ['on_truncated defaults to fail', {}, [truncated], ['fail'], 'truncated'],
    ['on_error: fail fails the node with provider_error', { onError: 'fail' }, [error], ['fail'], 'provider_error'],
    ['on_refusal: retry resends to the same model', { onRefusal: 'retry' }, [refusal, ok], ['retry', 'succeed'], null],
    ['on_truncated: fallback goes to the next model', { onTruncated: 'fallback' }, [truncated, ok], ['fallback', 'succeed'], null],
    ['retry: budget used up → the node fails', { retries: 2 }, [error, error, error], ['retry', 'retry', 'fail'], 'provider_error'],
    ['repair and retry share one budget', { retries: 2 }, [invalid, error, invalid], ['repair', 'retry', 'fail'], 'invalid_output'],
    ['fallback with no model left → fail', { onError: 'fallback' }, [error, error], ['fallback', 'fail'], 'provider_error'],
    ['a client error is not resent by on_error: retry', {}, [clientError], ['fail'], 'provider_error'],
    ['a client error may still fall back', { onError: 'fallback' }, [clientError, ok], ['fallback', 'succeed'], null],
  ] as const)('%s', (_row, over, verdicts, expected, code) => {
    const { decisions } = play(pol(over as Partial<NodePolicy>), [...verdicts]);
    expect(kinds(decisions)).toEqual(expected);
    const last = decisions.at(-1)!;
    expect(last.kind === 'fail' ? last.code : null).toBe(code);
  });

  it('every decision records cause and action', () => {
    const { decisions } = play(pol({ retries: 3, onError: 'fallback', onRefusal: 'retry' }), [invalid, refusal, error, ok]);
    expect(decisions.map((d) => [d.cause, d.action])).toEqual([
      ['invalid_output', 'repair'],
      ['refusal', 'retry'],
      ['provider_error', 'fallback'],
      [null, 'none'],
    ]);
  });

  it('fallback with retries 3: the fallback model gets 4 answers of its own', () => {
    const { decisions, states } = play(pol({ retries: 3, onError: 'fallback', onRefusal: 'retry' }), [
      error, // primary → fallback at once, not spending its 3 retries
      refusal,
      refusal,
      refusal,
      refusal, // the fallback's 4th answer: budget used up
    ]);
    expect(kinds(decisions)).toEqual(['fallback', 'retry', 'retry', 'retry', 'fail']);
    expect(states.map((s) => [s.chainIndex, s.answers])).toEqual([
      [0, 1],
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 4],
    ]);
  });

  it('1 repair + 1 error-retry with retries: 2 leaves 1 answer', () => {
    const { decisions, states } = play(pol({ retries: 2 }), [invalid, error, ok]);
    expect(kinds(decisions)).toEqual(['repair', 'retry', 'succeed']);
    expect(states.at(-1)!.answers).toBe(3); // the last of 3 = retries + 1
  });

  it('retries: 0 allows exactly one answer per model', () => {
    expect(kinds(play(pol({ retries: 0 }), [error]).decisions)).toEqual(['fail']);
    expect(kinds(play(pol({ retries: 0 }), [invalid]).decisions)).toEqual(['fail']);
  });
});

describe('hints name the field and the agent file', () => {
  const hint = (over: Partial<NodePolicy>, v: Verdict[]) => {
    const d = play(pol(over), v).decisions.at(-1)!;
    if (d.kind !== 'fail') throw new Error('expected fail');
    return d.hint;
  };
  it.each([
    ['refusal under fail', {}, [refusal], 'Set output.on_refusal to "retry" or "fallback" in agents/classifier.yaml'],
    ['truncated under fail', {}, [truncated], 'Set output.on_truncated to "retry" or "fallback" in agents/classifier.yaml'],
    ['error under fail', { onError: 'fail' as const }, [error], 'Set output.on_error to "retry" or "fallback" in agents/classifier.yaml'],
    ['retry budget used', { retries: 0 }, [error], 'Raise output.retries (now 0) or set output.on_error to "fallback" in agents/classifier.yaml'],
    ['no model left', { onRefusal: 'fallback' as const, chain: ['p:only'] }, [refusal], 'Add a model to fallback_models or set output.on_refusal to "retry" in agents/classifier.yaml'],
    ['invalid output', {}, [invalid, invalid], 'Raise output.retries (now 1) or set output.strict: true in agents/classifier.yaml'],
  ])('%s', (_n, over, v, expected) => {
    expect(hint(over, v)).toBe(expected);
  });
  it('a client error points at the request and at on_error', () => {
    expect(hint({}, [clientError])).toMatch(/output\.on_error.*agents\/classifier\.yaml/);
  });
});
