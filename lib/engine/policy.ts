// The outcome policy as a pure state machine (DESIGN: Outcome policies, repair and budgets; seed
// page "What an agent does with an error, a refusal or a truncation"):
// `(state, verdict) → decision`. No I/O, no clock, no imports but types: the dashboard uses it too.
//
// Hints only suggest fixes that work: each failure's hint is computed from the agent as it is
// (which models follow in the chain, whether the failure can be resent, the retries left, whether
// strict is possible) and offers only changes that pass `aqven check` and would have let the node
// go on at this point.

import { cutOffInFlight } from './cut-off-try';
import type { Action, AttemptRecord, Cause, NodeErrorCode, NodePolicy, NodeResult, Outcome, OutcomePolicy, TryRecord } from './types';

type NodeBudget = NodeResult['budget'];

/** Where the node stands: the model of the chain in use and how many answers it has given. */
export interface PolicyState {
  chainIndex: number;
  /** answers of the current model for this node, counting the attempt being decided */
  answers: number;
}

/**
 * The rate-limit gate refused the attempt's first try, so nothing was sent: the attempt is recorded
 * but is no answer, and resending to a model that is still paused cannot help (DESIGN: Outcome
 * policies, repair and budgets). The provider setting whose limit the wait passed, for the hint.
 */
export interface NotSentFacts {
  /** e.g. "on_rate_limit.max_wait" or "transport.budget" */
  setting: string;
  /** its value in words, e.g. "60 s" */
  now: string;
  /** the provider file that sets it, e.g. "providers/openrouter.yaml" */
  file: string;
}

/** What one attempt came to, as far as the policy cares. */
export type Verdict =
  | { outcome: 'ok'; valid: boolean }
  | {
      outcome: Exclude<Outcome, 'ok'>;
      /** false for a plain client error (DESIGN: Transport retry and rate limits): `on_error: retry` does not resend it */
      resendable: boolean;
      /** set when the gate refused to send anything: not an answer, never retried on the same model */
      notSent?: NotSentFacts;
      /** the provider said the quota or spend limit is spent: cause `quota`, never resent to the same model (DESIGN: Transport retry and rate limits) */
      quota?: boolean;
      /** the server asked to wait longer than the provider allows (`on_rate_limit.max_wait`): an answer, but never resent to the same model */
      waitTooLong?: NotSentFacts;
    };

/** Facts about the agent beyond its policy that decide which fixes would pass `aqven check`. */
export interface AgentFacts {
  /** output.strict: true would pass the check: every model of the chain has structured outputs */
  strictAllowed?: boolean;
}

export type FailReason =
  /** the agent's on_* field says fail */
  | 'policy'
  /** retry or repair wanted, but the model has used its `retries + 1` answers */
  | 'budget'
  /** fallback wanted, but no model is left in the chain */
  | 'no_model_left'
  /** a client error under `on_error: retry`: resending the same request cannot help */
  | 'not_resendable'
  /** the rate-limit gate refused to send, and no fallback model takes the request */
  | 'not_sent'
  /** the model's quota is spent, and no fallback model takes the request */
  | 'quota'
  /** the server's wait is longer than on_rate_limit.max_wait, and no fallback model takes the request */
  | 'wait_too_long';

type OutcomeField = 'on_error' | 'on_refusal' | 'on_truncated';

/** One change a hint offers; `agent` changes are applied to the agent file (the table test applies them). */
export type Fix =
  /** set output.<field> (and, with `raiseRetriesTo`, output.retries too) */
  | { kind: 'set'; field: OutcomeField; to: Exclude<OutcomePolicy, 'fail'>; raiseRetriesTo?: number }
  /** raise output.retries */
  | { kind: 'raise_retries'; to: number }
  /** add another model at the end of fallback_models (and set output.<field> to "fallback") */
  | { kind: 'add_fallback'; field?: OutcomeField }
  | { kind: 'strict' }
  /** a provider setting, in its own file */
  | { kind: 'provider'; setting: string; now: string; file: string }
  /** not an agent change: the provider account's quota (its plan, credits or spend limit) */
  | { kind: 'quota' }
  /** not an agent change: the node's output schema (flows/…) */
  | { kind: 'schema' };

export type Decision =
  | { kind: 'succeed'; cause: null; action: 'none' }
  | { kind: 'fail'; cause: Cause; action: 'none'; code: NodeErrorCode; reason: FailReason; hint: string; fixes: Fix[] }
  | { kind: 'retry' | 'repair'; cause: Cause; action: Extract<Action, 'retry' | 'repair'>; next: PolicyState }
  | { kind: 'fallback'; cause: Cause; action: 'fallback'; next: PolicyState };

/** Whether the node ends on an attempt that took `action` (it succeeded or failed on it); retry, repair and fallback go on. */
export function endsNode(action: Action): boolean {
  return action === 'none';
}

export const INITIAL_STATE: PolicyState = { chainIndex: 0, answers: 0 };

/** The highest `output.retries` an agent file may set (`aqven check`, lib/project/schema.ts). */
export const RETRIES_MAX = 10;

/** The state for the next attempt: one more answer of the current model. */
export function beginAttempt(state: PolicyState): PolicyState {
  return { chainIndex: state.chainIndex, answers: state.answers + 1 };
}

const CAUSE: Record<Exclude<Outcome, 'ok'>, Cause> = { error: 'provider_error', refusal: 'refusal', truncated: 'truncated' };
/** The agent-file field that decides each bad outcome. */
export const OUTCOME_FIELD: Record<Exclude<Outcome, 'ok'>, OutcomeField> = {
  error: 'on_error',
  refusal: 'on_refusal',
  truncated: 'on_truncated',
};
const POLICY_KEY = { on_error: 'onError', on_refusal: 'onRefusal', on_truncated: 'onTruncated' } as const;

/** One answer budget per model: `retries + 1`, shared by repair and retry. */
export function answerLimit(policy: Pick<NodePolicy, 'retries'>): number {
  return policy.retries + 1;
}

export function decide(policy: NodePolicy, agentFile: string, state: PolicyState, verdict: Verdict, facts: AgentFacts = {}): Decision {
  const limit = answerLimit(policy);
  const budgetLeft = state.answers < limit;
  const canRaise = policy.retries < RETRIES_MAX;

  if (verdict.outcome === 'ok') {
    if (verdict.valid) return { kind: 'succeed', cause: null, action: 'none' };
    if (budgetLeft) return { kind: 'repair', cause: 'invalid_output', action: 'repair', next: state };
    const fixes: Fix[] = [];
    if (canRaise) fixes.push({ kind: 'raise_retries', to: policy.retries + 1 });
    if (!policy.strict && facts.strictAllowed) fixes.push({ kind: 'strict' });
    else fixes.push({ kind: 'schema' });
    return fail('invalid_output', 'budget', fixes, policy, agentFile);
  }

  const cause: Cause = verdict.quota ? 'quota' : CAUSE[verdict.outcome];
  const field = OUTCOME_FIELD[verdict.outcome];
  const choice: OutcomePolicy = policy[POLICY_KEY[field]];
  const hasNext = state.chainIndex + 1 < policy.chain.length;
  const fallback = { kind: 'fallback', cause, action: 'fallback', next: { chainIndex: state.chainIndex + 1, answers: 0 } } as const;

  // the fixes this failure could take
  const toFallback = (f: OutcomeField): Fix => (hasNext ? { kind: 'set', field: f, to: 'fallback' } : { kind: 'add_fallback', field: f });
  const toRetry = (): Fix[] => {
    if (!verdict.resendable || verdict.notSent || verdict.waitTooLong) return [];
    if (budgetLeft) return [{ kind: 'set', field, to: 'retry' }];
    return canRaise ? [{ kind: 'set', field, to: 'retry', raiseRetriesTo: state.answers }] : [];
  };

  // no answer was given and the model is still paused, or the server's wait is longer than the
  // provider allows: resending to the same model (after the capped pause) would undercut that wait
  const blocked = verdict.notSent ?? verdict.waitTooLong;
  if (blocked) {
    if (choice === 'fallback' && hasNext) return fallback;
    const route: Fix = choice === 'fallback' ? { kind: 'add_fallback' } : toFallback(field);
    return fail(cause, verdict.notSent ? 'not_sent' : 'wait_too_long', [{ kind: 'provider', ...blocked }, route], policy, agentFile);
  }

  if (verdict.quota) {
    // waiting will not bring the quota back: never the same model again, whatever the policy says
    if (choice === 'fallback' && hasNext) return fallback;
    const route: Fix = choice === 'fallback' ? { kind: 'add_fallback' } : toFallback(field);
    return fail(cause, 'quota', [{ kind: 'quota' }, route], policy, agentFile);
  }

  switch (choice) {
    case 'fail':
      return fail(cause, 'policy', [...toRetry(), toFallback(field)], policy, agentFile, verdict.resendable ? '' : REJECTED);
    case 'retry':
      if (!verdict.resendable) {
        const lead = `The provider rejected the request, so output.${field} "retry" does not resend it: fix the request or the provider's key, or `;
        return fail(cause, 'not_resendable', [toFallback(field)], policy, agentFile, lead);
      }
      if (budgetLeft) return { kind: 'retry', cause, action: 'retry', next: state };
      return fail(cause, 'budget', [...(canRaise ? [{ kind: 'raise_retries', to: state.answers } as const] : []), toFallback(field)], policy, agentFile);
    case 'fallback':
      if (hasNext) return fallback;
      return fail(cause, 'no_model_left', [{ kind: 'add_fallback' }, ...toRetry()], policy, agentFile, verdict.resendable ? '' : REJECTED);
  }
}

/** What the hint says before its offers when the provider rejected the request itself. */
const REJECTED = "The provider rejected the request, so resending it cannot help: fix the request or the provider's key, or ";

function fail(cause: Cause, reason: FailReason, fixes: Fix[], policy: NodePolicy, agentFile: string, lead = ''): Decision {
  return { kind: 'fail', cause, action: 'none', code: cause, reason, hint: lead + hintText(fixes, policy, agentFile, lead !== ''), fixes };
}

function fixText(f: Fix, policy: NodePolicy): string {
  switch (f.kind) {
    case 'set':
      return f.raiseRetriesTo === undefined ? `set output.${f.field} to "${f.to}"` : `set output.${f.field} to "${f.to}" and raise output.retries (now ${policy.retries})`;
    case 'raise_retries':
      return `raise output.retries (now ${policy.retries})`;
    case 'add_fallback':
      return f.field === undefined ? 'add another model to fallback_models' : `add another model to fallback_models and set output.${f.field} to "fallback"`;
    case 'strict':
      return 'set output.strict: true';
    case 'provider':
      return `raise ${f.setting} (now ${f.now})`;
    case 'quota':
      return "raise the quota of the provider's account (its plan, credits or spend limit)";
    case 'schema':
      return "simplify the node's output schema";
  }
}

/** "A, or B in agents/x.yaml": offers that change the same file share its name at the end. */
function hintText(fixes: Fix[], policy: NodePolicy, agentFile: string, continued: boolean): string {
  const fileOf = (f: Fix): string | null => (f.kind === 'provider' ? f.file : f.kind === 'schema' || f.kind === 'quota' ? null : agentFile);
  const parts = fixes.map((f, i) => {
    const file = fileOf(f);
    const next = fixes[i + 1];
    return file === null || (next !== undefined && fileOf(next) === file) ? fixText(f, policy) : `${fixText(f, policy)} in ${file}`;
  });
  const offers = parts.join(', or ');
  return continued ? offers : offers.charAt(0).toUpperCase() + offers.slice(1);
}

/**
 * Answers used per model of the chain against the `retries + 1` limit (the budget gauge). An
 * attempt the rate-limit gate never sent (`error.kind` `not_sent`) is no answer, nor is one cut off
 * (closed without an outcome: its run stopped, or its process died). One in flight counts.
 */
export function computeBudget(
  policy: Pick<NodePolicy, 'chain' | 'retries'>,
  attempts: readonly (Pick<AttemptRecord, 'chainIndex'> & {
    error?: { kind: string } | null;
    outcome?: Outcome | null;
    finishedAt?: number | null;
    tries?: readonly Pick<TryRecord, 'error'>[];
  })[],
): NodeBudget {
  const limit = answerLimit(policy);
  // an attempt closed with no outcome is no answer, unless it was cut off with a try in flight (the provider may have answered)
  const answer = (a: (typeof attempts)[number]) =>
    a.error?.kind !== 'not_sent' && !(a.outcome === null && a.finishedAt != null && !(a.tries && cutOffInFlight({ outcome: null, tries: a.tries })));
  return {
    retries: policy.retries,
    models: policy.chain.map((model, i) => ({ model, answers: attempts.filter((a) => a.chainIndex === i && answer(a)).length, limit })),
  };
}
