// What the run page derives from the stored facts of a run (DESIGN: The dashboard): which model
// gave a node its accepted answer, the state of each model of the fallback chain, the spend on
// dropped attempts, and the geometry of the timeline (transport tries and the waits between them).
// Pure: the page renders it on the server and again on every poll in the browser.
import type { NodeFacts, RunFacts } from '@/db/types';
import type { UsageTotals } from '@/lib/engine/types';
import { sumUsageRounded } from '@/lib/engine/usage';
import { nodeBudget, usageLookupOf } from '@/lib/flow/run-record';
import type { FlowShape } from './flow-graph';

export type AttemptFacts = NodeFacts['attempts'][number];
export type TryFacts = AttemptFacts['tries'][number];

/** Colour key of an attempt: the outcome, except an ok answer that failed its checks. */
export type OutcomeKey = 'ok' | 'error' | 'refusal' | 'truncated' | 'invalid' | 'pending';

export function outcomeKey(a: Pick<AttemptFacts, 'outcome' | 'cause'>): OutcomeKey {
  if (a.outcome == null) return 'pending';
  if (a.outcome === 'ok' && a.cause === 'invalid_output') return 'invalid';
  return a.outcome;
}

/**
 * A dropped attempt's response is not the node's answer (seed page: "The bad response is
 * dropped"); its tokens and cost still count. Retry, fallback and repair all drop it.
 */
export function isDropped(a: Pick<AttemptFacts, 'discarded' | 'action'>): boolean {
  return a.discarded || a.action === 'retry' || a.action === 'fallback' || a.action === 'repair';
}

/** The attempt whose answer the node accepted, when the node succeeded. */
export function acceptedAttempt(node: Pick<NodeFacts, 'status' | 'attempts'>): AttemptFacts | null {
  if (node.status !== 'succeeded') return null;
  for (let i = node.attempts.length - 1; i >= 0; i--) {
    const a = node.attempts[i]!;
    if (a.outcome === 'ok' && a.cause == null && !isDropped(a)) return a;
  }
  return null;
}

export type ChainState = 'answered' | 'failed' | 'untried';

export interface ChainModel {
  model: string;
  index: number;
  /** answered: gave the accepted answer; failed: called, and the node moved on or failed; untried: never called */
  state: ChainState;
  answers: number;
  limit: number;
  /** an attempt of this model is in flight right now */
  inFlight: boolean;
}

function belongsTo(a: AttemptFacts, index: number, model: string, hasPolicy: boolean): boolean {
  return hasPolicy ? a.chainIndex === index : a.model === model;
}

/** The fallback chain in order with each model's state and budget (answers used / limit). */
export function chainModels(node: Pick<NodeFacts, 'status' | 'attempts' | 'policy'>): ChainModel[] {
  const budget = nodeBudget(node.policy, node.attempts);
  const accepted = acceptedAttempt(node);
  const hasPolicy = node.policy != null;
  return budget.models.map((m, index) => {
    const mine = node.attempts.filter((a) => belongsTo(a, index, m.model, hasPolicy));
    const answered = accepted != null && belongsTo(accepted, index, m.model, hasPolicy);
    // an attempt still in flight has not failed yet; the model counts as failed once one settled
    const settled = mine.some((a) => a.outcome != null);
    return {
      model: m.model,
      index,
      state: answered ? 'answered' : settled ? 'failed' : 'untried',
      answers: m.answers,
      limit: m.limit,
      inFlight: mine.some((a) => a.outcome == null),
    };
  });
}

export interface Spend {
  /** `usageUnknown`: attempts whose usage the provider never reported; `unpriced`: attempts with tokens
   * no price covers (costSource `none`) — either makes the totals a lower bound */
  total: UsageTotals & { usageUnknown: number; unpriced: number };
  /** attempts whose response was dropped (retried, fell back, repaired): tokens still paid for */
  dropped: UsageTotals & { attempts: number; usageUnknown: number };
}

export function runSpend(run: Pick<RunFacts, 'nodes'>): Spend {
  const all = run.nodes.flatMap((n) => n.attempts);
  const dropped = all.filter(isDropped);
  const unknown = (as: typeof all) => as.filter((a) => a.usageUnknown).length;
  return {
    total: { ...sumUsageRounded(all.map((a) => a.usage)), usageUnknown: unknown(all), unpriced: all.filter((a) => a.costSource === 'none').length },
    dropped: { ...sumUsageRounded(dropped.map((a) => a.usage)), attempts: dropped.length, usageUnknown: unknown(dropped) },
  };
}

export function nodeSpend(node: Pick<NodeFacts, 'attempts'>): Spend {
  return runSpend({ nodes: [node as NodeFacts] });
}

/** Shorter gaps between tries are bookkeeping, not waits worth drawing. */
const MIN_GAP_MS = 20;

export type SegmentKind = 'try' | 'try-failed' | 'wait' | 'pause';

export interface Segment {
  kind: SegmentKind;
  start: number;
  end: number;
  label: string;
}

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)} s` : `${Math.round(n)} ms`);

function tryLabel(t: TryFacts): string {
  const what = t.status != null ? `HTTP ${t.status}` : (t.error ?? 'no response');
  const err = t.error && t.status != null ? ` (${t.error})` : '';
  return `try ${t.tryNo}: ${what}${err}, ${ms(t.finishedAt - t.startedAt)}`;
}

function tryFailed(t: TryFacts): boolean {
  return t.error != null || (t.status != null && t.status >= 400);
}

/**
 * The pieces of one attempt on the time axis: its transport tries, and the time between them
 * drawn as gaps — a rate-limit pause (time at the model's gate, `waitedMs`, or after a 429) or a
 * plain wait (retry-after / backoff after a transient failure).
 */
export function attemptSegments(a: AttemptFacts, _now: number): Segment[] {
  const tries = [...a.tries].sort((x, y) => x.tryNo - y.tryNo);
  const out: Segment[] = [];
  let cursor = a.startedAt;
  let prev: TryFacts | null = null;
  for (const t of tries) {
    if (t.startedAt - cursor >= MIN_GAP_MS) {
      // after a 429, or at the model's gate before the first try: the model was paused
      const rateLimited = prev ? prev.status === 429 || prev.error === 'rate_limited' : t.waitedMs > 0;
      const parts = [rateLimited ? 'rate-limit pause' : 'wait before retry', ms(t.startedAt - cursor)];
      if (prev?.retryAfterMs != null) parts.push(`retry-after ${ms(prev.retryAfterMs)}`);
      if (t.waitedMs > 0) parts.push(`${ms(t.waitedMs)} at the model's gate`);
      out.push({ kind: rateLimited ? 'pause' : 'wait', start: cursor, end: t.startedAt, label: `${parts[0]}: ${parts.slice(1).join(', ')}` });
    }
    out.push({ kind: tryFailed(t) ? 'try-failed' : 'try', start: t.startedAt, end: Math.max(t.finishedAt, t.startedAt), label: tryLabel(t) });
    cursor = Math.max(cursor, t.finishedAt);
    prev = t;
  }
  // a try in flight is recorded only when it ends: until then its wait and its bytes look alike
  return out;
}

/** Total time of an attempt spent waiting between or before tries. */
export function waitedTotal(a: AttemptFacts, now: number): number {
  return attemptSegments(a, now)
    .filter((s) => s.kind === 'wait' || s.kind === 'pause')
    .reduce((sum, s) => sum + (s.end - s.start), 0);
}

export interface TimeAxis {
  start: number;
  end: number;
  ticks: { at: number; label: string }[];
}

// from 1 ms: a run over in a few milliseconds (a simulator answering at once) still gets an axis of several ticks
const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];

export function timeAxis(run: Pick<RunFacts, 'startedAt' | 'finishedAt' | 'nodes'>, now: number): TimeAxis {
  const start = run.startedAt;
  let end = run.finishedAt ?? now;
  for (const n of run.nodes) {
    for (const a of n.attempts) end = Math.max(end, a.finishedAt ?? now);
    if (n.finishedAt != null) end = Math.max(end, n.finishedAt);
  }
  if (end <= start) end = start + 1;
  const span = end - start;
  const step = STEPS.find((s) => span / s <= 8) ?? 3_600_000;
  const ticks: TimeAxis['ticks'] = [];
  for (let t = 0; t <= span; t += step) ticks.push({ at: start + t, label: t === 0 ? '0' : ms(t) });
  return { start, end, ticks };
}

/** Left and width in percent of the axis. */
export function place(axis: TimeAxis, from: number, to: number): { left: number; width: number } {
  const span = axis.end - axis.start;
  const left = ((Math.max(from, axis.start) - axis.start) / span) * 100;
  const right = ((Math.min(Math.max(to, from), axis.end) - axis.start) / span) * 100;
  return { left: round2(left), width: round2(Math.max(right - left, 0)) };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

export interface TurnGroup {
  /** the turn; 0 for the groups that are not a turn */
  turn: number;
  /** `pending`: the flow's nodes not started yet (a live run); `not-reached`: nodes the run ended without */
  kind: 'turn' | 'pending' | 'not-reached';
  nodes: NodeFacts[];
}

export interface PlaceOptions {
  /** the run's flow: a skipped node is placed one turn below the deepest of its needs */
  flow?: FlowShape | null;
  /** turns the run has started (runs.turns) */
  turns?: number;
  /** the run may still start turns (queued or running) */
  live?: boolean;
}

/**
 * The turn a node is shown under. A node that ran: its turn. A node skipped because a node it
 * needs failed is stored with the turn in which that happened (the run loop skips it before the
 * next turn starts), yet it would have run in a later turn, beside the on_fail route that took its
 * place: one turn after the deepest of its needs (without the flow: one after the stored turn).
 * 0: not placed in a turn (never reached, not started yet).
 */
export function placedTurn(nodes: NodeFacts[], flow: FlowShape | null = null): Map<string, number> {
  const rows = new Map(nodes.map((n) => [n.id, n]));
  const needs = new Map((flow?.nodes ?? []).map((n) => [n.id, n.needs]));
  const out = new Map<string, number>();
  const visiting = new Set<string>();
  const of = (id: string): number => {
    const known = out.get(id);
    if (known !== undefined) return known;
    const n = rows.get(id);
    if (!n || n.turn <= 0) return 0;
    if (n.status !== 'skipped' || visiting.has(id)) return n.turn;
    visiting.add(id);
    const placed = (needs.get(id) ?? []).filter((d) => rows.has(d)).map(of);
    visiting.delete(id);
    const t = placed.length ? Math.max(...placed) + 1 : n.turn + 1;
    out.set(id, t);
    return t;
  };
  for (const n of nodes) out.set(n.id, of(n.id));
  return out;
}

/**
 * Nodes grouped by the turn they are shown under (placedTurn), turns in order; then the nodes not
 * started yet (a live run), then those never reached — a skipped node whose turn never came included.
 */
export function nodesByTurn(nodes: NodeFacts[], opts: PlaceOptions = {}): TurnGroup[] {
  const placed = placedTurn(nodes, opts.flow ?? null);
  const turns = new Map<number, NodeFacts[]>();
  const pending: NodeFacts[] = [];
  const unreached: NodeFacts[] = [];
  for (const n of nodes) {
    let t = placed.get(n.id) ?? 0;
    // a turn the run never started (it ended first): its skipped nodes were never reached
    if (t > 0 && n.status === 'skipped' && !opts.live && opts.turns !== undefined && t > opts.turns) t = 0;
    if (t > 0) turns.set(t, [...(turns.get(t) ?? []), n]);
    else if (opts.live && n.status === 'pending') pending.push(n);
    else unreached.push(n);
  }
  const out: TurnGroup[] = [...turns.entries()].sort(([a], [b]) => a - b).map(([turn, list]) => ({ turn, kind: 'turn' as const, nodes: list }));
  if (pending.length) out.push({ turn: 0, kind: 'pending', nodes: pending });
  if (unreached.length) out.push({ turn: 0, kind: 'not-reached', nodes: unreached });
  return out;
}

export interface StreamPart {
  key: string;
  seq: number;
  text: string;
  discarded: boolean;
  /** the transport try whose connection broke mid-stream, when the part is such a try's text */
  tryNo?: number;
}

/**
 * Streamed text of a node as it was shown live (DESIGN: Streaming): the text of a try whose
 * connection broke mid-stream and of every dropped attempt is discarded; the rest is the answer.
 */
export function streamParts(node: Pick<NodeFacts, 'attempts'>): StreamPart[] {
  const out: StreamPart[] = [];
  for (const a of node.attempts) {
    for (const t of a.tries) {
      if (t.discardedText) out.push({ key: `${a.seq}.${t.tryNo}`, seq: a.seq, text: t.discardedText, discarded: true, tryNo: t.tryNo });
    }
    if (a.streamedText) out.push({ key: String(a.seq), seq: a.seq, text: a.streamedText, discarded: a.discarded || isDropped(a) });
  }
  return out;
}

/**
 * The few words the attempt line adds about the later lookup of a cut-off reply's usage (DESIGN:
 * Usage unknown, never zero): found (its tokens are in the usage shown), pending, given up; null
 * when none was looked up.
 */
export function usageLookupText(a: Pick<AttemptFacts, 'tries'>): { text: string; title: string } | null {
  switch (usageLookupOf(a.tries)) {
    case 'found':
      return { text: 'usage found later', title: 'the reply was cut off; its usage was looked up from the provider afterwards and is counted here' };
    case 'pending':
      return { text: 'usage lookup pending', title: 'the provider will be asked for the usage of the cut-off reply (aqven runs reconcile)' };
    case 'gave_up':
      return { text: 'usage lookup gave up', title: 'the provider never gave the usage of the cut-off reply' };
    default:
      return null;
  }
}
