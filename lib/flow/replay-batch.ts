// A replay batch (DESIGN: The dashboard, "Replay"): many nodes (a failure group) replayed with
// bounded concurrency under one cost cap, each through planReplay and startReplay (replay.ts).
import { agentCostHistory, type AgentCostHistory } from '@/db/replay-queries';
import { roundCost } from '@/lib/engine/usage';
import { fmtCost as usd } from '@/lib/shared/cost-text';
import {
  estimateReplay,
  ESTIMATE_HISTORY_NODES,
  planReplay,
  ReplayRefusedError,
  startReplay,
  type ReplayDeps,
  type ReplayEstimate,
  type ReplayPlan,
  type StartedReplay,
} from './replay';
import { RunInterruptedError } from './run-errors';

export interface BatchItem {
  runId: string;
  nodeId: string;
}

/** waiting → running → succeeded | failed (the replay ended otherwise); refused: could not be planned; not_started: the batch stopped first */
export type BatchItemState = 'waiting' | 'running' | 'succeeded' | 'failed' | 'refused' | 'not_started';

export interface BatchItemProgress extends BatchItem {
  state: BatchItemState;
  replayRunId: string | null;
  /** why it was refused or not started, or how the replay ended when not succeeded */
  reason: string | null;
  estimateUsd: number | null;
  costUsd: number;
}

export interface BatchProgress {
  total: number;
  concurrency: number;
  capUsd: number | null;
  spentUsd: number;
  /** items in each state */
  counts: Record<BatchItemState, number>;
  /** the most replays that ran at once */
  peakRunning: number;
  done: boolean;
  /** why the batch stopped before its end (the cap, the rate limit); null when it went through */
  stopped: string | null;
  items: BatchItemProgress[];
}

export interface BatchOptions {
  /** replays at once (at least 1) */
  concurrency: number;
  /** the batch's cost cap: no replay starts that would pass it, and those running are stopped once it is reached; null: none */
  capUsd: number | null;
  /** asked before each replay starts: a reason to stop the batch (the rate limit on run starts), or null */
  admit?: () => Promise<string | null>;
  /** the project to run with, read before each replay starts (the files as they are then) */
  deps: () => Promise<ReplayDeps> | ReplayDeps;
  onProgress?: (p: BatchProgress) => void;
}

/** A copy of the batch's state, for the progress route and the tests. */
function snapshot(p: BatchProgress): BatchProgress {
  return { ...p, counts: { ...p.counts }, items: p.items.map((i) => ({ ...i })) };
}

/**
 * Replays `items` at most `concurrency` at a time under one cost cap: before each replay starts,
 * what is spent plus what the running ones are still expected to cost plus its own estimate must
 * stay within the cap — otherwise the batch stops, the rest not started; once what is spent reaches
 * the cap, the replays running are stopped (their attempts in flight cut off; one whose answer just
 * came in keeps it). Resolves with the summary (how many now succeed).
 */
export async function runReplayBatch(items: readonly BatchItem[], o: BatchOptions): Promise<BatchProgress> {
  const batch = new ReplayBatch(items, o);
  const lanes = Math.min(batch.p.concurrency, Math.max(1, items.length));
  await Promise.all(Array.from({ length: lanes }, () => batch.lane()));
  const { p } = batch;
  p.spentUsd = roundCost(p.items.reduce((s, it) => s + it.costUsd, 0));
  p.done = true;
  batch.report();
  return snapshot(p);
}

class ReplayBatch {
  readonly p: BatchProgress;
  /** the stop of each replay running */
  private readonly running = new Map<BatchItemProgress, AbortController>();
  private readonly histories = new Map<string, Promise<AgentCostHistory>>();
  private next = 0;
  private capReached = false;

  constructor(
    items: readonly BatchItem[],
    private readonly o: BatchOptions,
  ) {
    this.p = {
      total: items.length,
      concurrency: Math.max(1, Math.floor(o.concurrency)),
      capUsd: o.capUsd,
      spentUsd: 0,
      counts: { waiting: items.length, running: 0, succeeded: 0, failed: 0, refused: 0, not_started: 0 },
      peakRunning: 0,
      done: false,
      stopped: null,
      items: items.map((i) => ({ runId: i.runId, nodeId: i.nodeId, state: 'waiting', replayRunId: null, reason: null, estimateUsd: null, costUsd: 0 })),
    };
  }

  report(): void {
    this.o.onProgress?.(snapshot(this.p));
  }

  /** One lane: the next waiting item, until none is left; an item that could not even start stops the batch. */
  async lane(): Promise<void> {
    const { p } = this;
    while (this.next < p.items.length) {
      const it = p.items[this.next++]!;
      if (it.state !== 'waiting') continue;
      try {
        await this.one(it);
      } catch (err) {
        // a replay that could not even start (the database cannot be written): the rest do not start either
        if (it.state === 'waiting' || it.state === 'running') this.move(it, 'failed', err instanceof Error ? err.message : String(err));
        this.stop(`replay of ${it.runId} node ${it.nodeId} could not run: ${err instanceof Error ? err.message : String(err)}`);
      }
      this.report();
    }
  }

  private move(it: BatchItemProgress, state: BatchItemState, reason: string | null = it.reason): void {
    const { p } = this;
    p.counts[it.state]--;
    p.counts[state]++;
    it.state = state;
    it.reason = reason;
    p.peakRunning = Math.max(p.peakRunning, p.counts.running);
  }

  private stop(why: string): void {
    this.p.stopped ??= why;
    for (const it of this.p.items) if (it.state === 'waiting') this.move(it, 'not_started', why);
  }

  /** still expected of the replays running: their estimates beyond what they spent so far */
  private pending(): number {
    return this.p.items.reduce((s, it) => s + (it.state === 'running' ? Math.max(0, (it.estimateUsd ?? 0) - it.costUsd) : 0), 0);
  }

  /** The item's plan and estimate; null when it was refused, or the batch stopped meanwhile. */
  private async planned(it: BatchItemProgress, deps: ReplayDeps): Promise<{ plan: ReplayPlan; est: ReplayEstimate } | null> {
    let plan: ReplayPlan;
    try {
      plan = await planReplay(deps.db, deps.project, it.runId, it.nodeId);
    } catch (err) {
      if (!(err instanceof ReplayRefusedError)) throw err;
      this.move(it, 'refused', err.message);
      return null;
    }
    if (!this.histories.has(plan.agent)) this.histories.set(plan.agent, agentCostHistory(deps.db, plan.agent, ESTIMATE_HISTORY_NODES));
    const est = await estimateReplay(deps.db, plan, await this.histories.get(plan.agent));
    it.estimateUsd = est.costUsd;
    if (it.state !== 'waiting') return null; // the batch stopped meanwhile
    if (this.p.stopped) {
      this.move(it, 'not_started', this.p.stopped);
      return null;
    }
    return { plan, est };
  }

  /** Whether the item may start within the cap and the rate limit (counted as running from here); else the batch stops. */
  private async admitted(it: BatchItemProgress, est: ReplayEstimate): Promise<boolean> {
    const { p, o } = this;
    if (o.capUsd !== null && p.spentUsd + this.pending() + est.costUsd > o.capUsd) {
      const expected = usd(this.pending());
      this.stop(
        `the batch's cost cap of ${usd(o.capUsd)} would be passed: ${usd(p.spentUsd)} spent, ${expected} still expected of the replays running, the next estimated at ${usd(est.costUsd)}`,
      );
      return false;
    }
    // counted as running from here: a lane checking the cap meanwhile reckons with its estimate
    this.move(it, 'running');
    const refusal = await o.admit?.();
    if (refusal) {
      this.move(it, 'not_started', refusal);
      this.stop(refusal);
      return false;
    }
    return true;
  }

  /** An attempt's cost heard: counted; once the cap is reached the batch stops, and the replays running with it. */
  private onCost(it: BatchItemProgress, c: number, more: boolean): void {
    const { p, o } = this;
    it.costUsd += c;
    p.spentUsd += c;
    if (o.capUsd === null || p.spentUsd < o.capUsd || this.capReached) return;
    this.capReached = true;
    this.stop(`the batch's cost cap of ${usd(o.capUsd)} was reached (${usd(p.spentUsd)} spent)`);
    const why = new RunInterruptedError(`stopped: the replay batch reached its cost cap of ${usd(o.capUsd)}`);
    // the replay whose answer was just accepted is over: stopping it would only mark it interrupted
    for (const [other, stopper] of this.running) if (other !== it || more) stopper.abort(why);
  }

  private async one(it: BatchItemProgress): Promise<void> {
    if (this.p.stopped) return this.move(it, 'not_started', this.p.stopped);
    const deps = await this.o.deps();
    const planned = await this.planned(it, deps);
    if (!planned || !(await this.admitted(it, planned.est))) return;
    this.report();
    const ac = new AbortController();
    this.running.set(it, ac);
    let started: StartedReplay;
    try {
      started = await startReplay(planned.plan, deps, { signal: ac.signal, onCost: (c, more) => this.onCost(it, c, more) });
    } catch (err) {
      this.running.delete(it);
      throw err;
    }
    it.replayRunId = started.runId;
    this.report();
    const r = await started.done.finally(() => this.running.delete(it));
    it.costUsd = r.costUsd;
    this.move(it, r.status === 'succeeded' ? 'succeeded' : 'failed', r.status === 'succeeded' ? null : (r.record.error?.message ?? r.status));
  }
}
