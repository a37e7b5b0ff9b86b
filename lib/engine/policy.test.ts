import { describe, expect, it } from 'vitest';
import { beginAttempt, computeBudget, decide, INITIAL_STATE, OUTCOME_FIELD, RETRIES_MAX, type Decision, type Fix, type PolicyState, type Verdict } from './policy';
import type { NodePolicy, OutcomePolicy } from './types';

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
    ['refusal under fail', {}, [refusal], 'Set output.on_refusal to "retry", or set output.on_refusal to "fallback" in agents/classifier.yaml'],
    ['truncated under fail', {}, [truncated], 'Set output.on_truncated to "retry", or set output.on_truncated to "fallback" in agents/classifier.yaml'],
    ['error under fail', { onError: 'fail' as const }, [error], 'Set output.on_error to "retry", or set output.on_error to "fallback" in agents/classifier.yaml'],
    [
      'refusal under fail, no fallback_models: "fallback" alone would fail aqven check (E_OUTCOME_FALLBACK)',
      { chain: ['p:only'] },
      [refusal],
      'Set output.on_refusal to "retry", or add another model to fallback_models and set output.on_refusal to "fallback" in agents/classifier.yaml',
    ],
    [
      'refusal under fail with retries 0: "retry" alone would not resend',
      { retries: 0, chain: ['p:only'] },
      [refusal],
      'Set output.on_refusal to "retry" and raise output.retries (now 0), or add another model to fallback_models and set output.on_refusal to "fallback" in agents/classifier.yaml',
    ],
    [
      'a 404 under on_error fail: "retry" never resends a client error',
      { onError: 'fail' as const, chain: ['p:only'] },
      [clientError],
      'The provider rejected the request, so resending it cannot help: fix the request or the provider\'s key, or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml',
    ],
    ['retry budget used', { retries: 0 }, [error], 'Raise output.retries (now 0), or set output.on_error to "fallback" in agents/classifier.yaml'],
    [
      'retry budget used at the highest retries',
      { retries: 10, chain: ['p:only'] },
      Array(11).fill(error),
      'Add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml',
    ],
    [
      'no model left',
      { onRefusal: 'fallback' as const, chain: ['p:only'] },
      [refusal],
      'Add another model to fallback_models, or set output.on_refusal to "retry" in agents/classifier.yaml',
    ],
    ['invalid output, strict not known to be possible', {}, [invalid, invalid], "Raise output.retries (now 1) in agents/classifier.yaml, or simplify the node's output schema"],
    ['invalid output, strict already on', { strict: true }, [invalid, invalid], "Raise output.retries (now 1) in agents/classifier.yaml, or simplify the node's output schema"],
  ])('%s', (_n, over, v, expected) => {
    expect(hint(over, v)).toBe(expected);
  });
  it('invalid output where strict would pass the check', () => {
    const d = decide(pol(), FILE, { chainIndex: 0, answers: 2 }, invalid, { strictAllowed: true });
    expect(d.kind === 'fail' && d.hint).toBe('Raise output.retries (now 1), or set output.strict: true in agents/classifier.yaml');
  });
  it('a client error under retry points at the request and at on_error', () => {
    expect(hint({}, [clientError])).toBe(
      'The provider rejected the request, so output.on_error "retry" does not resend it: fix the request or the provider\'s key, or set output.on_error to "fallback" in agents/classifier.yaml',
    );
  });
});

describe('a spent quota (cause quota) is never resent to the same model, whatever on_error says', () => {
  const quota: Verdict = { outcome: 'error', resendable: false, quota: true };
  it.each(['retry', 'fail'] as const)('under on_error %s the node fails at once with code quota, a hint to raise the quota or add a fallback model', (onError) => {
    const d = decide(pol({ chain: ['p:only'], onError, retries: 3 }), FILE, { chainIndex: 0, answers: 1 }, quota);
    expect(d).toMatchObject({ kind: 'fail', cause: 'quota', code: 'quota', reason: 'quota' });
    expect(d.kind === 'fail' && d.hint).toBe(
      'Raise the quota of the provider\'s account (its plan, credits or spend limit), or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml',
    );
  });
  it('under on_error fallback it moves to the next model with a full budget, cause quota', () => {
    expect(decide(pol({ onError: 'fallback' }), FILE, { chainIndex: 0, answers: 1 }, quota)).toMatchObject({
      kind: 'fallback',
      cause: 'quota',
      next: { chainIndex: 1, answers: 0 },
    });
  });
  it('under on_error fallback with no model left, the hint offers another model', () => {
    const d = decide(pol({ onError: 'fallback' }), FILE, { chainIndex: 1, answers: 1 }, quota);
    expect(d.kind === 'fail' && d.hint).toBe(
      "Raise the quota of the provider's account (its plan, credits or spend limit), or add another model to fallback_models in agents/classifier.yaml",
    );
  });
});

describe('a server wait longer than on_rate_limit.max_wait: an answer, but never resent to the same model before that wait', () => {
  const tooLong: Verdict = { outcome: 'error', resendable: false, waitTooLong: { setting: 'on_rate_limit.max_wait', now: '60 s', file: 'providers/p.yaml' } };
  it('under on_error retry the node fails at once, the hint naming max_wait and fallback', () => {
    const d = decide(pol({ retries: 3 }), FILE, { chainIndex: 0, answers: 1 }, tooLong);
    expect(d).toMatchObject({ kind: 'fail', code: 'provider_error', reason: 'wait_too_long' });
    expect(d.kind === 'fail' && d.hint).toBe('Raise on_rate_limit.max_wait (now 60 s) in providers/p.yaml, or set output.on_error to "fallback" in agents/classifier.yaml');
  });
  it('under on_error fallback it moves to the next model', () => {
    expect(decide(pol({ onError: 'fallback' }), FILE, { chainIndex: 0, answers: 1 }, tooLong)).toMatchObject({ kind: 'fallback', next: { chainIndex: 1, answers: 0 } });
  });
  it('counts as an answer in the budget gauge (the request was sent)', () => {
    const b = computeBudget(pol(), [{ chainIndex: 0, error: { kind: 'transport' } }]);
    expect(b.models.map((m) => m.answers)).toEqual([1, 0]);
  });
});

describe('a call the rate-limit gate never sent is no answer, and never resent to the same model', () => {
  const notSent: Verdict = { outcome: 'error', resendable: false, notSent: { setting: 'on_rate_limit.max_wait', now: '60 s', file: 'providers/p.yaml' } };
  it('under on_error retry (the default) the node fails at once, with a hint naming max_wait and fallback_models', () => {
    const d = decide(pol({ chain: ['p:only'] }), FILE, { chainIndex: 0, answers: 1 }, notSent);
    expect(d).toMatchObject({ kind: 'fail', code: 'provider_error', reason: 'not_sent' });
    expect(d.kind === 'fail' && d.hint).toBe(
      'Raise on_rate_limit.max_wait (now 60 s) in providers/p.yaml, or add another model to fallback_models and set output.on_error to "fallback" in agents/classifier.yaml',
    );
  });
  it('with a fallback model left under on_error retry, the hint names it', () => {
    const d = decide(pol(), FILE, { chainIndex: 0, answers: 1 }, notSent);
    expect(d.kind === 'fail' && d.hint).toBe('Raise on_rate_limit.max_wait (now 60 s) in providers/p.yaml, or set output.on_error to "fallback" in agents/classifier.yaml');
  });
  it('under on_error fallback it moves to the next model with a full budget', () => {
    expect(decide(pol({ onError: 'fallback' }), FILE, { chainIndex: 0, answers: 1 }, notSent)).toMatchObject({ kind: 'fallback', next: { chainIndex: 1, answers: 0 } });
  });
  it('is not counted by the budget gauge', () => {
    const b = computeBudget(pol(), [
      { chainIndex: 0, error: { kind: 'not_sent' } },
      { chainIndex: 1, error: null },
    ]);
    expect(b.models.map((m) => m.answers)).toEqual([0, 1]);
  });
  it('nor is an attempt cut off without an outcome (its run stopped, its process died); one in flight counts', () => {
    const cut = { chainIndex: 0, outcome: null, finishedAt: 5, error: { kind: 'transport' } };
    const inFlight = { chainIndex: 1, outcome: null, finishedAt: null, error: null };
    const b = computeBudget(pol(), [cut, { chainIndex: 0, outcome: 'ok' as const, finishedAt: 4, error: null }, inFlight]);
    expect(b.models.map((m) => m.answers)).toEqual([1, 1]);
  });
});

// -------------------------------------------------------------------------------------------
// Hints only suggest fixes that work: for every (outcome × policy × chain × resendable × strict)
// combination — and every budget state — each fix a failing node's hint offers, applied to the
// agent, passes `aqven check` and would have let the node go on at that point.

type Kind = 'error' | 'refusal' | 'truncated' | 'invalid' | 'not_sent';
const FIELD_OF = { error: 'onError', refusal: 'onRefusal', truncated: 'onTruncated', not_sent: 'onError' } as const;
const CHAINS = {
  single: { chain: ['p:a'], at: 0 },
  first: { chain: ['p:a', 'p:b'], at: 0 },
  last: { chain: ['p:a', 'p:b'], at: 1 },
} as const;
const BUDGETS = {
  left: { retries: 1, answers: 1 },
  used: { retries: 1, answers: 2 },
  'used at the highest retries': { retries: RETRIES_MAX, answers: RETRIES_MAX + 1 },
} as const;

/** The rules of `aqven check` an agent's policy must pass (E_OUTCOME_FALLBACK, E_FIELD for retries, E_STRICT, E_CHAIN_DUPLICATE). */
function checkProblems(p: NodePolicy, strictAllowed: boolean): string[] {
  const out: string[] = [];
  if (p.chain.length < 2 && [p.onError, p.onRefusal, p.onTruncated].includes('fallback')) out.push('E_OUTCOME_FALLBACK');
  if (p.retries > RETRIES_MAX || p.retries < 0) out.push('E_FIELD');
  if (p.strict && !strictAllowed) out.push('E_STRICT');
  if (new Set(p.chain).size !== p.chain.length) out.push('E_CHAIN_DUPLICATE');
  return out;
}

function apply(p: NodePolicy, f: Fix): NodePolicy | null {
  const key = { on_error: 'onError', on_refusal: 'onRefusal', on_truncated: 'onTruncated' } as const;
  switch (f.kind) {
    case 'set':
      return { ...p, [key[f.field]]: f.to, ...(f.raiseRetriesTo !== undefined && { retries: f.raiseRetriesTo }) };
    case 'raise_retries':
      return { ...p, retries: f.to };
    case 'add_fallback':
      return { ...p, chain: [...p.chain, 'p:another'], ...(f.field && { [key[f.field]]: 'fallback' }) };
    case 'strict':
      return { ...p, strict: true };
    default:
      return null; // a provider setting or the node's schema: not the agent file
  }
}

const combos: [Kind, OutcomePolicy, keyof typeof CHAINS, boolean, boolean, boolean, keyof typeof BUDGETS][] = [];
for (const kind of ['error', 'refusal', 'truncated', 'invalid', 'not_sent'] as Kind[])
  for (const choice of ['fail', 'retry', 'fallback'] as OutcomePolicy[])
    for (const chain of Object.keys(CHAINS) as (keyof typeof CHAINS)[])
      for (const resendable of [true, false])
        for (const strict of [false, true])
          for (const strictAllowed of [true, false])
            for (const budget of Object.keys(BUDGETS) as (keyof typeof BUDGETS)[]) combos.push([kind, choice, chain, resendable, strict, strictAllowed, budget]);

const checked = new Set<string>();

describe('hints only suggest fixes that work', () => {
  it.each(combos)('%s under %s, chain %s, resendable %s, strict %s (allowed %s), budget %s', (kind, choice, chainKey, resendable, strict, strictAllowed, budgetKey) => {
    const { chain, at } = CHAINS[chainKey];
    const { retries, answers } = BUDGETS[budgetKey];
    const policy: NodePolicy = { ...base, chain: [...chain], retries, strict, onError: 'fail', onRefusal: 'fail', onTruncated: 'fail' };
    if (kind !== 'invalid') policy[FIELD_OF[kind]] = choice;
    // an agent that does not pass the check never runs
    if (checkProblems(policy, strictAllowed).length) return;
    const state = { chainIndex: at, answers };
    const verdict: Verdict =
      kind === 'invalid'
        ? { outcome: 'ok', valid: false }
        : kind === 'not_sent'
          ? { outcome: 'error', resendable: false, notSent: { setting: 'on_rate_limit.max_wait', now: '60 s', file: 'providers/p.yaml' } }
          : { outcome: kind, resendable };
    const d = decide(policy, FILE, state, verdict, { strictAllowed });
    if (d.kind !== 'fail') return;
    checked.add(`${kind}/${d.reason}`);

    expect(d.fixes.length).toBeGreaterThan(0);
    expect(d.hint).toMatch(/^[A-Z]/);
    // fail: the hint names the field to change in the agent file (seed page)
    if (d.reason === 'policy') expect(d.hint).toContain(`output.${OUTCOME_FIELD[verdict.outcome as 'error']}`);
    for (const f of d.fixes) {
      if (f.kind === 'schema') {
        expect(kind).toBe('invalid');
        continue;
      }
      if (f.kind === 'provider') {
        expect(kind).toBe('not_sent');
        expect(d.hint.toLowerCase()).toContain(`raise ${f.setting} (now ${f.now}) in ${f.file}`.toLowerCase());
        continue;
      }
      if (f.kind === 'strict') {
        expect([policy.strict, strictAllowed]).toEqual([false, true]);
        continue;
      }
      const fixed = apply(policy, f)!;
      // it passes aqven check…
      expect(checkProblems(fixed, strictAllowed)).toEqual([]);
      // …and the same answer at the same point would no longer fail the node
      const chainIndex = state.chainIndex;
      const again = decide(fixed, FILE, { chainIndex, answers: state.answers }, verdict, { strictAllowed });
      expect(again.kind, `${JSON.stringify(f)} → ${again.kind}`).not.toBe('fail');
    }
  });

  it('the table reached every kind of failure', () => {
    expect([...checked].sort()).toEqual([
      'error/budget',
      'error/no_model_left',
      'error/not_resendable',
      'error/policy',
      'invalid/budget',
      'not_sent/not_sent',
      'refusal/budget',
      'refusal/no_model_left',
      'refusal/not_resendable',
      'refusal/policy',
      'truncated/budget',
      'truncated/no_model_left',
      'truncated/not_resendable',
      'truncated/policy',
    ]);
  });
});
