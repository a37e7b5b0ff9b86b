// The run record (DESIGN: The run record): one shape for `aqven run --json`, `aqven show --json`,
// `GET /api/runs/:id` and the dashboard. Built by one function from the same facts, whether they
// come from a live run or from the database, so the two can never drift apart.
import type { RunLink, RunOrigin, RunTrace } from '@/db/queries';
import type { AttemptFacts, NodeFacts, NodeStatus, RunError, RunFacts, RunStatus } from '@/db/types';
import { computeBudget } from '@/lib/engine/policy';
import type { Message, NodePolicy } from '@/lib/engine/types';
import { roundCost, sumUsageRounded } from '@/lib/engine/usage';

// the facts are db's types (what is stored); re-exported for the readers of the record
export type { AttemptFacts, NodeFacts, NodeStatus, RunError, RunFacts, RunLink, RunOrigin, RunStatus, RunTrace };

export interface UsageJson {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface AttemptJson {
  seq: number;
  model: string;
  /** the model's place in the agent's chain: 0 its `model`, 1 the first of `fallback_models`, … */
  chainIndex: number;
  /** which answer of this model for the node it was, 1 … `retries + 1` (a `not_sent` attempt is no answer: the number it would have had) */
  answerNo: number;
  outcome: string | null;
  finishReason: string | null;
  /** the upstream model's own finish reason behind a router's (OpenRouter's `native_finish_reason`), which can decide the outcome; null when none was sent */
  nativeFinishReason: string | null;
  /** an ok answer whose finish reason decided nothing: "unrecognised finish reason `eos`", "no finish reason"; null otherwise */
  finishNote: string | null;
  cause: string | null;
  action: string | null;
  discarded: boolean;
  usage: UsageJson;
  /** the reply was not read to its end (size limit, timeout, break), or reported no usage: `usage` is a lower bound, never a zero to trust */
  usageUnknown: boolean;
  /** reasoning tokens the provider stated apart (part of `usage.outputTokens`); null: none stated */
  reasoningTokens: number | null;
  /** whose price `usage.costUsd` is: `provider` (its stated charge), `catalogue`, `none` — neither: the cost is unknown (an unpriced model), not $0; null: nothing to price, or recorded before it was kept */
  costSource: 'provider' | 'catalogue' | 'none' | null;
  /**
   * the usage of a reply cut off after a 2xx, looked up from the provider afterwards (DESIGN: Usage
   * unknown, never zero): `pending` while some lookup waits, else `gave_up` when one was given up,
   * else `found` (its usage is in `usage`); null when no try of the attempt was looked up
   */
  usageLookup: 'pending' | 'found' | 'gave_up' | null;
  latencyMs: number | null;
  error: { kind: string; message: string; detail: string | null; validationErrors: { pointer: string; message: string }[] } | null;
  /** discardedText: what the try streamed before its connection broke and the attempt started afresh (redacted as stored); null otherwise */
  transport: { try: number; status: number | null; error: string | null; retryAfterMs: number | null; waitedMs: number; discardedText: string | null }[];
  /** the messages as sent, as stored (DESIGN: Redaction): a failed answer quoted back in a repair redacted, every message under full redaction */
  request: Message[];
}

export interface NodeJson {
  id: string;
  agent: string;
  turn: number;
  status: NodeStatus;
  output: unknown;
  error: { code: string; message: string; hint: string } | null;
  usage: UsageJson;
  budget: { retries: number; models: { model: string; answers: number; limit: number }[] };
  attempts: AttemptJson[];
}

export interface RunRecord {
  id: string;
  flow: string;
  /** flow: a run of the flow; replay: one node of another run run again (DESIGN: Replay); limits: a structural-limits probe */
  kind: RunLink['kind'];
  /** a replay's original run (null once it was purged, and for another kind) */
  replayOf: string | null;
  /** the node a replay ran again; null for another kind */
  replayNode: string | null;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: RunError | null;
  usage: UsageJson;
  /** some attempt's usage is unknown: `usage` is a lower bound */
  usageUnknown: boolean;
  startedAt: string;
  finishedAt: string | null;
  /** who started the run: a user's name, `token:<name>`, `cli:<login>`; null when not known */
  startedBy: string | null;
  /** sha256 (hex) of the project's files the run ran under; null in runs recorded before it was kept */
  projectHash: string | null;
  /** the project snapshot the run ran under (PostgreSQL mode); null when the project is a folder */
  snapshotId: number | null;
  /** the W3C trace id of the run's spans (DESIGN: Observability, "Traces"): its caller's traceparent's, or the one AQVEN's tracer opened; absent when neither */
  traceId?: string;
  nodes: NodeJson[];
}

const iso = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

/** Answers used per model of the chain, against the `retries + 1` limit (the budget gauge). */
export function nodeBudget(policy: NodePolicy | null, attempts: Parameters<typeof computeBudget>[1]): NodeJson['budget'] {
  return policy ? computeBudget(policy, attempts) : { retries: 0, models: [] };
}

/** The state of an attempt's usage lookups: one pending makes it pending, then one given up, then found. */
export function usageLookupOf(tries: readonly { usageLookup?: AttemptJson['usageLookup'] }[]): AttemptJson['usageLookup'] {
  const states = new Set(tries.map((t) => t.usageLookup ?? null));
  for (const s of ['pending', 'gave_up', 'found'] as const) if (states.has(s)) return s;
  return null;
}

function attemptJson(a: AttemptFacts): AttemptJson {
  return {
    seq: a.seq,
    model: a.model,
    chainIndex: a.chainIndex,
    answerNo: a.answerNo,
    outcome: a.outcome,
    finishReason: a.finishReason,
    nativeFinishReason: a.nativeFinishReason ?? null,
    finishNote: a.finishNote ?? null,
    cause: a.cause,
    action: a.action,
    discarded: a.discarded,
    usage: { ...a.usage, costUsd: roundCost(a.usage.costUsd) },
    usageUnknown: a.usageUnknown === true,
    reasoningTokens: a.reasoningTokens ?? null,
    costSource: a.costSource ?? null,
    usageLookup: usageLookupOf(a.tries),
    latencyMs: a.finishedAt == null ? null : a.finishedAt - a.startedAt,
    error: a.error ? { kind: a.error.kind, message: a.error.message, detail: a.error.detail, validationErrors: a.validationErrors } : null,
    transport: a.tries.map((t) => ({ try: t.tryNo, status: t.status, error: t.error, retryAfterMs: t.retryAfterMs, waitedMs: t.waitedMs, discardedText: t.discardedText ?? null })),
    request: a.request,
  };
}

export function buildRunRecord(run: RunFacts & Partial<RunOrigin> & Partial<RunLink> & Partial<RunTrace>): RunRecord {
  const nodes: NodeJson[] = run.nodes.map((n) => ({
    id: n.id,
    agent: n.agent,
    turn: n.turn,
    status: n.status,
    output: n.output ?? null,
    error: n.error,
    usage: sumUsageRounded(n.attempts.map((a) => a.usage)),
    budget: nodeBudget(n.policy, n.attempts),
    attempts: n.attempts.map(attemptJson),
  }));
  return {
    id: run.id,
    flow: run.flow,
    // facts without a kind are a flow run's (runFlow sets a replay's or a limits probe's from its runKind)
    kind: run.kind ?? 'flow',
    replayOf: run.replayOf ?? null,
    replayNode: run.replayNode ?? null,
    status: run.status,
    input: run.input ?? null,
    output: run.output ?? null,
    error: run.error,
    usage: sumUsageRounded(nodes.map((n) => n.usage)),
    usageUnknown: nodes.some((n) => n.attempts.some((a) => a.usageUnknown)),
    startedAt: iso(run.startedAt)!,
    finishedAt: iso(run.finishedAt),
    startedBy: run.startedBy ?? null,
    projectHash: run.projectHash ?? null,
    snapshotId: run.snapshotId ?? null,
    ...(run.traceId && { traceId: run.traceId }),
    nodes,
  };
}
