// A node restarted after its process died (DESIGN: Storage, "Leases"): the answers its models gave
// before count against their `retries + 1` (One model, one budget), and the node goes on from the
// decision its last answer calls for under the agent's policy as it is now — the same decision
// when the policy did not change. A retry or repair resends the node's original request: a repair
// prompt is not carried over. A last answer that ended the node (its end was not stored) ends it again.
import { fmtDuration } from './duration-text';
import { answerLimit, decide, type AgentFacts, type Decision, type NotSentFacts, type PolicyState, type Verdict } from './policy';
import type { NodePolicy, PriorAnswers, PriorAttempt, ResolvedProvider } from './types';
import { validateOutput } from './validate';

/** Answers `model` gave: stored attempts with an outcome, except those the gate never sent (no answer). */
export function priorAnswersOf(prior: PriorAnswers | undefined, model: string): number {
  return prior ? prior.attempts.filter((a) => a.model === model && a.error?.kind !== 'not_sent').length : 0;
}

/**
 * The limit a never-sent attempt passed, read back from its one try (DESIGN: Outcome policies): a
 * pause longer than `on_rate_limit.max_wait`, else the transport budget.
 */
export function notSentFactsOf(a: PriorAttempt, provider: ResolvedProvider): NotSentFacts {
  const t = a.tries.at(-1);
  const file = `providers/${provider.name}.yaml`;
  const { maxWaitMs } = provider.onRateLimit;
  if (t?.error === 'rate_limited' && t.retryAfterMs !== null && t.retryAfterMs > maxWaitMs) return { setting: 'on_rate_limit.max_wait', now: fmtDuration(maxWaitMs), file };
  return { setting: 'transport.budget', now: fmtDuration(provider.transport.budgetMs), file };
}

/** What the policy reads of a stored answer, and an ok answer's value under the node's schema as it is now. */
function storedVerdict(a: PriorAttempt, schema: Record<string, unknown> | undefined, notSent: (a: PriorAttempt) => NotSentFacts): { verdict: Verdict; value: unknown } {
  if (a.outcome === 'ok') {
    if (a.error?.kind === 'invalid_output' || a.responseText === null) return { verdict: { outcome: 'ok', valid: false }, value: null };
    if (!schema) return { verdict: { outcome: 'ok', valid: true }, value: a.responseText };
    const v = validateOutput(schema, a.responseText);
    return v.valid ? { verdict: { outcome: 'ok', valid: true }, value: v.value } : { verdict: { outcome: 'ok', valid: false }, value: null };
  }
  if (a.error?.kind === 'not_sent') return { verdict: { outcome: a.outcome, resendable: false, notSent: notSent(a) }, value: null };
  if (a.error?.kind === 'quota') return { verdict: { outcome: a.outcome, resendable: false, quota: true }, value: null };
  // the server asked to wait longer than on_rate_limit.max_wait: the same model is not asked again
  const t = a.tries.at(-1);
  if (a.error?.kind === 'transport' && t && t.status !== null && t.retryAfterMs !== null) {
    const facts = notSent(a);
    if (facts.setting === 'on_rate_limit.max_wait') return { verdict: { outcome: a.outcome, resendable: false, waitTooLong: facts }, value: null };
  }
  return { verdict: { outcome: a.outcome, resendable: a.error?.kind !== 'client_error' }, value: null };
}

/** Where a restarted node stands. */
export type ResumePoint =
  /** ask again from `state` (the engine's loop begins the attempt: one more answer of that model) */
  | { kind: 'ask'; state: PolicyState }
  /** the last stored answer ended the node: `value` is a succeeded node's output */
  | { kind: 'end'; decision: Extract<Decision, { kind: 'succeed' | 'fail' }>; last: PriorAttempt; value: unknown };

export interface ResumeContext {
  policy: NodePolicy;
  agentFile: string;
  outputSchema?: Record<string, unknown>;
  facts?: AgentFacts;
  /** the provider setting a never-sent attempt passed (notSentFactsOf) */
  notSent: (a: PriorAttempt) => NotSentFacts;
}

/** The state a node restarts from, its earlier answers counted against each model's budget. */
export function resumePoint(prior: PriorAnswers, c: ResumeContext): ResumePoint {
  const { policy } = c;
  const at = (chainIndex: number): PolicyState => ({ chainIndex, answers: priorAnswersOf(prior, policy.chain[chainIndex]!) });
  const last = prior.attempts.at(-1);
  const i = last ? policy.chain.indexOf(last.model) : -1;
  // no answer yet, or the last one came from a model the chain no longer has: from the chain's start
  if (!last || i < 0) return { kind: 'ask', state: at(0) };
  // an answer cut off in flight (write-ahead): counted, and its model asked again while it has answers left
  if (last.cutOff && at(i).answers < answerLimit(policy)) return { kind: 'ask', state: at(i) };
  const { verdict, value } = storedVerdict(last, c.outputSchema, c.notSent);
  const decision = decide(policy, c.agentFile, at(i), verdict, c.facts);
  switch (decision.kind) {
    case 'succeed':
    case 'fail':
      return { kind: 'end', decision, last, value };
    case 'retry':
    case 'repair':
      return { kind: 'ask', state: decision.next };
    case 'fallback':
      // the next model's own answers, if it gave any (a chain reordered since), count too
      return { kind: 'ask', state: at(decision.next.chainIndex) };
  }
}
