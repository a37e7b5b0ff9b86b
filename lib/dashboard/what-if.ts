// "What if" on the agent policy form (DESIGN: The dashboard): on the agent's last N nodes, what a
// draft policy would have done — success rate, answers per node, cost per node, p95 latency — next
// to what today's policy measured over the same nodes. Pure: history in, estimate out.
//
// Method: each model of the chain answers like it did in these nodes — every simulated attempt is
// one of that model's stored attempts drawn at random (its outcome, cost and time together) — and
// the engine's own `decide()` walks the chain exactly as callNode does (retries, repairs and
// fallbacks under one shared budget). Uncertainty: the whole simulation is repeated over bootstrap
// resamples of the nodes (a node's attempts stay together), and the 2.5th–97.5th percentiles of
// the repeats make the 95% interval. The PRNG is seeded: the same history gives the same figures.
import type { HistoryAttempt, HistoryNode } from '@/db/what-if-queries';
import { beginAttempt, decide, INITIAL_STATE, type Verdict } from '@/lib/engine/policy';
import type { NodePolicy } from '@/lib/engine/types';
import { mulberry32 } from '@/lib/sim/chaos';
import { wilson, type Figure } from '@/lib/shared/wilson';

export { wilson, type Figure };

/** What one stored attempt came to, as far as the policy cares (the Verdict it would get again). */
export const ATTEMPT_KINDS = ['ok', 'invalid', 'error', 'client_error', 'not_sent', 'refusal', 'truncated'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

/** Fewer answers than this from a model of the draft chain, and the estimate is too thin to tell. */
export const THIN_ATTEMPTS = 20;

export const WHAT_IF_DEFAULTS = {
  seed: 0x5eed,
  /** simulated nodes of the point estimate */
  nodes: 20_000,
  /** bootstrap repeats of the interval */
  resamples: 200,
  /** simulated nodes per repeat */
  nodesPerResample: 1_000,
};

/** A figure with its 95% interval. */
export interface ModelHistory {
  model: string;
  /** attempts with an outcome in the window's nodes */
  attempts: number;
  counts: Record<AttemptKind, number>;
  meanCostUsd: number;
  meanDurationMs: number;
  /** a model of the draft chain */
  inDraft: boolean;
  /** in the draft chain with fewer than THIN_ATTEMPTS attempts (none included) */
  thin: boolean;
}

export interface Measured {
  nodes: number;
  /** nodes that succeeded; the interval is Wilson's (binomial) */
  success: Figure;
  answers: number;
  costUsd: number;
  p95LatencyMs: number;
}

export interface Estimate {
  policy: NodePolicy;
  /** share of nodes that would succeed; a node that reaches a model without history counts as not succeeding */
  success: Figure;
  /** share of nodes that would reach a model of the chain with no history: success may be that much higher */
  unknown: Figure;
  answers: Figure;
  costUsd: Figure;
  p95LatencyMs: Figure;
}

export interface WhatIfResult {
  agent: string;
  /** the window asked for, and the nodes it held */
  window: number;
  nodes: number;
  /** nodes left out: an attempt was cut off (no outcome), or none was made */
  leftOut: number;
  /** nodes of the window that ran under a policy other than today's */
  otherPolicy: number;
  measured: Measured | null;
  /** today's policy replayed through the same simulation: how far the method is from what happened */
  today: Estimate | null;
  draft: Estimate | null;
  models: ModelHistory[];
  /** draft-chain models with no attempt in the window: the estimate cannot say what they would do */
  missingModels: string[];
  /** draft-chain models with some, but fewer than THIN_ATTEMPTS, attempts */
  thinModels: string[];
  method: { seed: number; nodes: number; resamples: number; nodesPerResample: number; thinAttempts: number };
}

/** One stored attempt → its kind: an ok answer that failed its checks is `invalid`; errors keep whether they could be resent. */
export function attemptKind(a: Pick<HistoryAttempt, 'outcome' | 'cause' | 'errorKind'>): AttemptKind | null {
  switch (a.outcome) {
    case null:
      return null;
    case 'ok':
      return a.cause === 'invalid_output' ? 'invalid' : 'ok';
    case 'error':
      // a spent quota is decided like a client error: never resent to the same model, fallback may take it
      return a.errorKind === 'client_error' || a.errorKind === 'quota' ? 'client_error' : a.errorKind === 'not_sent' ? 'not_sent' : 'error';
    default:
      return a.outcome;
  }
}

// the gate's setting is for hints only: the decision does not read it
const NOT_SENT: Verdict = { outcome: 'error', resendable: false, notSent: { setting: '', now: '', file: '' } };
const VERDICT: Record<AttemptKind, Verdict> = {
  ok: { outcome: 'ok', valid: true },
  invalid: { outcome: 'ok', valid: false },
  error: { outcome: 'error', resendable: true },
  client_error: { outcome: 'error', resendable: false },
  not_sent: NOT_SENT,
  refusal: { outcome: 'refusal', resendable: true },
  truncated: { outcome: 'truncated', resendable: true },
};

interface Sample {
  kind: AttemptKind;
  costUsd: number;
  durationMs: number;
}
interface SampleNode {
  succeeded: boolean;
  attempts: (Sample & { model: string })[];
}
type Pools = Map<string, Sample[]>;

/** The nodes a replay can stand on: every attempt got an outcome (none was cut off), and there was one. */
function usableNodes(history: readonly HistoryNode[]): SampleNode[] {
  const out: SampleNode[] = [];
  for (const n of history) {
    if (n.attempts.length === 0) continue;
    const attempts: SampleNode['attempts'] = [];
    for (const a of n.attempts) {
      const kind = attemptKind(a);
      if (kind === null) break;
      attempts.push({ model: a.model, kind, costUsd: a.costUsd, durationMs: a.durationMs });
    }
    if (attempts.length === n.attempts.length) out.push({ succeeded: n.status === 'succeeded', attempts });
  }
  return out;
}

function poolsOf(nodes: readonly SampleNode[]): Pools {
  const pools: Pools = new Map();
  for (const n of nodes)
    for (const a of n.attempts) {
      let p = pools.get(a.model);
      if (!p) pools.set(a.model, (p = []));
      p.push(a);
    }
  return pools;
}

/** Nearest-rank percentile of values already sorted ascending. */
function rank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Linear-interpolated percentile (the bootstrap's interval ends). */
function quantile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return 0;
  const at = q * (s.length - 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo]! + (s[hi]! - s[lo]!) * (at - lo);
}

interface Walk {
  succeeded: boolean;
  unknown: boolean;
  answers: number;
  costUsd: number;
  durationMs: number;
}

/** One node, walked as callNode walks it: each attempt's verdict goes to the engine's decide(). */
function walkNode(policy: NodePolicy, pools: Pools, rand: () => number): Walk {
  const w: Walk = { succeeded: false, unknown: false, answers: 0, costUsd: 0, durationMs: 0 };
  let state = INITIAL_STATE;
  // decide() ends every chain within (retries + 1) × chain answers; the bound only guards a bug
  for (let guard = 0; guard < 1000; guard++) {
    state = beginAttempt(state);
    const pool = pools.get(policy.chain[state.chainIndex]!);
    if (!pool?.length) {
      w.unknown = true;
      return w;
    }
    const a = pool[Math.floor(rand() * pool.length)]!;
    w.answers++;
    w.costUsd += a.costUsd;
    w.durationMs += a.durationMs;
    const d = decide(policy, 'agent', state, VERDICT[a.kind]);
    if (d.kind === 'succeed') {
      w.succeeded = true;
      return w;
    }
    if (d.kind === 'fail') return w;
    state = d.next;
  }
  return w;
}

interface Figures {
  success: number;
  unknown: number;
  answers: number;
  costUsd: number;
  p95LatencyMs: number;
}

function simulate(policy: NodePolicy, pools: Pools, rand: () => number, count: number): Figures {
  let succeeded = 0;
  let unknown = 0;
  let answers = 0;
  let cost = 0;
  const durations = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const w = walkNode(policy, pools, rand);
    if (w.succeeded) succeeded++;
    if (w.unknown) unknown++;
    answers += w.answers;
    cost += w.costUsd;
    durations[i] = w.durationMs;
  }
  durations.sort((a, b) => a - b);
  return { success: succeeded / count, unknown: unknown / count, answers: answers / count, costUsd: cost / count, p95LatencyMs: rank(durations, 0.95) };
}

/** The draft's figures over these nodes, with the bootstrap's 95% interval. */
function estimate(policy: NodePolicy, nodes: readonly SampleNode[], opts: typeof WHAT_IF_DEFAULTS): Estimate {
  const rand = mulberry32(opts.seed);
  const pools = poolsOf(nodes);
  const point = simulate(policy, pools, rand, opts.nodes);
  const repeats: Figures[] = [];
  for (let r = 0; r < opts.resamples; r++) {
    const resample = Array.from({ length: nodes.length }, () => nodes[Math.floor(rand() * nodes.length)]!);
    const p = poolsOf(resample);
    // a model with few attempts may miss a resample: it keeps its whole history, it did answer
    for (const [model, pool] of pools) if (!p.has(model)) p.set(model, pool);
    repeats.push(simulate(policy, p, rand, opts.nodesPerResample));
  }
  const figure = (k: keyof Figures): Figure => ({
    value: point[k],
    low: quantile(
      repeats.map((f) => f[k]),
      0.025,
    ),
    high: quantile(
      repeats.map((f) => f[k]),
      0.975,
    ),
  });
  return { policy, success: figure('success'), unknown: figure('unknown'), answers: figure('answers'), costUsd: figure('costUsd'), p95LatencyMs: figure('p95LatencyMs') };
}

/** What today's nodes did: success (Wilson's interval), answers, cost and p95 latency (a node's attempts, summed). */
export function measure(nodes: readonly { succeeded: boolean; attempts: readonly { costUsd: number; durationMs: number }[] }[]): Measured | null {
  if (nodes.length === 0) return null;
  const ok = nodes.filter((n) => n.succeeded).length;
  const answers = nodes.reduce((s, n) => s + n.attempts.length, 0);
  const cost = nodes.reduce((s, n) => s + n.attempts.reduce((c, a) => c + a.costUsd, 0), 0);
  const durations = nodes.map((n) => n.attempts.reduce((d, a) => d + a.durationMs, 0)).sort((a, b) => a - b);
  return { nodes: nodes.length, success: wilson(ok, nodes.length), answers: answers / nodes.length, costUsd: cost / nodes.length, p95LatencyMs: rank(durations, 0.95) };
}

function samePolicy(a: NodePolicy, b: NodePolicy): boolean {
  return (
    a.chain.length === b.chain.length &&
    a.chain.every((m, i) => m === b.chain[i]) &&
    a.retries === b.retries &&
    a.onError === b.onError &&
    a.onRefusal === b.onRefusal &&
    a.onTruncated === b.onTruncated &&
    a.strict === b.strict
  );
}

function modelHistories(nodes: readonly SampleNode[], draft: NodePolicy | null): ModelHistory[] {
  const by = new Map<string, ModelHistory>();
  const blank = (model: string): ModelHistory => ({
    model,
    attempts: 0,
    counts: Object.fromEntries(ATTEMPT_KINDS.map((k) => [k, 0])) as Record<AttemptKind, number>,
    meanCostUsd: 0,
    meanDurationMs: 0,
    inDraft: false,
    thin: false,
  });
  for (const n of nodes)
    for (const a of n.attempts) {
      let m = by.get(a.model);
      if (!m) by.set(a.model, (m = blank(a.model)));
      m.attempts++;
      m.counts[a.kind]++;
      m.meanCostUsd += a.costUsd;
      m.meanDurationMs += a.durationMs;
    }
  for (const model of draft?.chain ?? []) if (!by.has(model)) by.set(model, blank(model));
  const order = draft?.chain ?? [];
  return [...by.values()]
    .map((m) => {
      const inDraft = order.includes(m.model);
      return {
        ...m,
        meanCostUsd: m.attempts ? m.meanCostUsd / m.attempts : 0,
        meanDurationMs: m.attempts ? m.meanDurationMs / m.attempts : 0,
        inDraft,
        thin: inDraft && m.attempts < THIN_ATTEMPTS,
      };
    })
    .sort((a, b) => {
      const ia = order.indexOf(a.model);
      const ib = order.indexOf(b.model);
      if (ia !== ib) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
      return b.attempts - a.attempts || a.model.localeCompare(b.model);
    });
}

/**
 * The what-if of a draft policy over an agent's history: today's measured figures, today's policy
 * replayed (the method's own error), and the draft's estimate, each over the same nodes.
 */
export function whatIf(input: {
  agent: string;
  window: number;
  history: readonly HistoryNode[];
  draft: NodePolicy | null;
  today: NodePolicy | null;
  options?: Partial<typeof WHAT_IF_DEFAULTS>;
}): WhatIfResult {
  const opts = { ...WHAT_IF_DEFAULTS, ...input.options };
  const nodes = usableNodes(input.history);
  const models = modelHistories(nodes, input.draft);
  const has = (m: string) => models.some((h) => h.model === m && h.attempts > 0);
  const today = input.today;
  return {
    agent: input.agent,
    window: input.window,
    nodes: nodes.length,
    leftOut: input.history.length - nodes.length,
    otherPolicy: today ? input.history.filter((n) => n.policy && !samePolicy(n.policy, today)).length : 0,
    measured: measure(nodes),
    today: today && nodes.length ? estimate(today, nodes, opts) : null,
    draft: input.draft && nodes.length ? estimate(input.draft, nodes, opts) : null,
    models,
    missingModels: (input.draft?.chain ?? []).filter((m) => !has(m)),
    thinModels: models.filter((m) => m.thin && m.attempts > 0).map((m) => m.model),
    method: { seed: opts.seed, nodes: opts.nodes, resamples: opts.resamples, nodesPerResample: opts.nodesPerResample, thinAttempts: THIN_ATTEMPTS },
  };
}
