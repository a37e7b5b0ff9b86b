// The outcome policy as a pure state machine (DESIGN: Outcome policies, repair and budgets; seed
// page "What an agent does with an error, a refusal or a truncation"):
// `(state, verdict) → decision`. No I/O, no clock, no imports but types: the dashboard uses it too.

import type { Action, AttemptRecord, Cause, NodeErrorCode, NodePolicy, NodeResult, Outcome, OutcomePolicy } from './types';

type NodeBudget = NodeResult['budget'];

/** Where the node stands: the model of the chain in use and how many answers it has given. */
export interface PolicyState {
  chainIndex: number;
  /** answers of the current model for this node, counting the attempt being decided */
  answers: number;
}

/** What one attempt came to, as far as the policy cares. */
export type Verdict =
  | { outcome: 'ok'; valid: boolean }
  /** resendable: false for a plain client error (DESIGN: Transport retry and rate limits): `on_error: retry` does not resend it */
  | { outcome: Exclude<Outcome, 'ok'>; resendable: boolean };

export type FailReason =
  /** the agent's on_* field says fail */
  | 'policy'
  /** retry or repair wanted, but the model has used its `retries + 1` answers */
  | 'budget'
  /** fallback wanted, but no model is left in the chain */
  | 'no_model_left'
  /** a client error under `on_error: retry`: resending the same request cannot help */
  | 'not_resendable';

export type Decision =
  | { kind: 'succeed'; cause: null; action: 'none' }
  | { kind: 'fail'; cause: Cause; action: 'none'; code: NodeErrorCode; reason: FailReason; hint: string }
  | { kind: 'retry' | 'repair'; cause: Cause; action: Extract<Action, 'retry' | 'repair'>; next: PolicyState }
  | { kind: 'fallback'; cause: Cause; action: 'fallback'; next: PolicyState };

export const INITIAL_STATE: PolicyState = { chainIndex: 0, answers: 0 };

/** The state for the next attempt: one more answer of the current model. */
export function beginAttempt(state: PolicyState): PolicyState {
  return { chainIndex: state.chainIndex, answers: state.answers + 1 };
}

const CAUSE: Record<Exclude<Outcome, 'ok'>, Cause> = { error: 'provider_error', refusal: 'refusal', truncated: 'truncated' };
/** The agent-file field that decides each bad outcome. */
export const OUTCOME_FIELD: Record<Exclude<Outcome, 'ok'>, 'on_error' | 'on_refusal' | 'on_truncated'> = {
  error: 'on_error',
  refusal: 'on_refusal',
  truncated: 'on_truncated',
};
const POLICY_KEY = { on_error: 'onError', on_refusal: 'onRefusal', on_truncated: 'onTruncated' } as const;

/** One answer budget per model: `retries + 1`, shared by repair and retry. */
export function answerLimit(policy: Pick<NodePolicy, 'retries'>): number {
  return policy.retries + 1;
}

export function decide(policy: NodePolicy, agentFile: string, state: PolicyState, verdict: Verdict): Decision {
  const limit = answerLimit(policy);
  const budgetLeft = state.answers < limit;

  if (verdict.outcome === 'ok') {
    if (verdict.valid) return { kind: 'succeed', cause: null, action: 'none' };
    if (budgetLeft) return { kind: 'repair', cause: 'invalid_output', action: 'repair', next: state };
    const hint = policy.strict
      ? `Raise output.retries (now ${policy.retries}) in ${agentFile}, or simplify the node's output schema`
      : `Raise output.retries (now ${policy.retries}) or set output.strict: true in ${agentFile}`;
    return fail('invalid_output', 'budget', hint);
  }

  const cause = CAUSE[verdict.outcome];
  const field = OUTCOME_FIELD[verdict.outcome];
  const choice: OutcomePolicy = policy[POLICY_KEY[field]];
  const hasNext = state.chainIndex + 1 < policy.chain.length;

  switch (choice) {
    case 'fail':
      return fail(cause, 'policy', `Set output.${field} to "retry" or "fallback" in ${agentFile}`);
    case 'retry':
      if (verdict.outcome === 'error' && !verdict.resendable) {
        return fail(
          cause,
          'not_resendable',
          `The provider rejected the request, so output.on_error "retry" does not resend it: fix the request or the provider's key, or set output.on_error to "fallback" in ${agentFile}`,
        );
      }
      if (budgetLeft) return { kind: 'retry', cause, action: 'retry', next: state };
      return fail(cause, 'budget', `Raise output.retries (now ${policy.retries}) or set output.${field} to "fallback" in ${agentFile}`);
    case 'fallback':
      if (hasNext) return { kind: 'fallback', cause, action: 'fallback', next: { chainIndex: state.chainIndex + 1, answers: 0 } };
      return fail(cause, 'no_model_left', `Add a model to fallback_models or set output.${field} to "retry" in ${agentFile}`);
  }
}

function fail(cause: Cause, reason: FailReason, hint: string): Decision {
  return { kind: 'fail', cause, action: 'none', code: cause, reason, hint };
}

/** Answers used per model of the chain against the `retries + 1` limit (the budget gauge). */
export function computeBudget(policy: Pick<NodePolicy, 'chain' | 'retries'>, attempts: readonly Pick<AttemptRecord, 'chainIndex'>[]): NodeBudget {
  const limit = answerLimit(policy);
  return {
    retries: policy.retries,
    models: policy.chain.map((model, i) => ({ model, answers: attempts.filter((a) => a.chainIndex === i).length, limit })),
  };
}
