// What the store feeds besides the facts (DESIGN: Storage, "Notes, search and daily statistics"),
// written in the same commit as the facts they come from, by the rules of db/run-aggregates.ts:
// for `flow` runs only, agent_daily / node_daily / failure_daily sums, and for every run with a
// caller its spend per UTC day (caller_spend), gathered per commit and upserted once per key at
// its end. It keeps what the feeds need of each run and node in progress.
import { budgetCaller, spendDay } from '@/lib/shared/spend-budget';
import type { RunKind } from '../queries';
import { DailySums } from '../run-aggregates';
import type { Statements, ValuesOf } from './statements';

/**
 * what the feeds need of each run of this store: its kind (null until an adopted run's row is
 * read), its start, and whose budget its spend counts against (budgetCaller of its started_by)
 */
export type RunInfo = { kind: RunKind | null; startedAt: number; inputDoc: string | null; caller: string | null };

/** a node's end as its row takes it (the update's values, its id included) */
export type NodeEnd = ValuesOf<Statements['finishNode']>;

/**
 * A node's first row as this store queued it: once written, its end is an update; a node that
 * ends before its queued row is written is written once, whole, where that row was queued (the
 * attempts queued after it name it): one insert, not an insert and an update.
 */
export type NodeRow = { written: boolean; end: NodeEnd | null };

/** each node run in progress: its run (finishNode names only the node run), agent and start (null until read) */
export type NodeInfo = { runId: string; run: RunInfo; agent: string | null; startedAt: number | null; row?: NodeRow };

/** a run started here: what its feeds need (`startedBy`: the budget its spend counts against) */
export const startedRun = (r: { kind?: RunKind; startedAt: number; startedBy?: string | null }): RunInfo => ({
  kind: r.kind ?? 'flow',
  startedAt: r.startedAt,
  inputDoc: null,
  caller: budgetCaller(r.startedBy),
});

export function runFeeds(s: Statements) {
  const runInfo = new Map<string, RunInfo>();
  const nodeInfo = new Map<string, NodeInfo>();
  /** the daily sums of the commit being drained, written at its end */
  const sums = new DailySums();
  /** the commit's spend per caller and UTC day (`caller\u0000day` → USD), written at its end */
  const spend = new Map<string, number>();
  /** the commit's spend, one upsert per caller and day, in key order (two commits lock shared rows in the same order) */
  const writeSpend = () => {
    for (const key of [...spend.keys()].sort()) {
      const [caller, day] = key.split('\u0000') as [string, string];
      s.callerSpend.run({ caller, day, usd: spend.get(key)! });
    }
    spend.clear();
  };
  /** the commit's daily sums, one upsert per key, last in the commit: the rows other writers share are locked the shortest time */
  const writeSums = () => {
    if (sums.empty) return;
    const { agents, nodes, failures } = sums.rows();
    for (const r of agents) s.agentDaily.run(r);
    for (const r of nodes) s.nodeDaily.run(r);
    for (const r of failures) s.failureDaily.run(r);
    sums.clear();
  };
  return {
    runInfo,
    nodeInfo,
    sums,
    /** an attempt's cost, for its run's caller (none: nobody's budget, or nothing spent) */
    spent: (run: RunInfo | undefined, usd: number, at: number) => {
      if (!run?.caller || !(usd > 0)) return;
      const key = `${run.caller}\u0000${spendDay(at)}`;
      spend.set(key, (spend.get(key) ?? 0) + usd);
    },
    /** a commit's drain starts: nothing gathered yet */
    begin: () => {
      sums.clear();
      spend.clear();
    },
    /** a commit's drain ends: its sums, then its spend */
    end: () => {
      writeSums();
      writeSpend();
    },
    /** a run leaves this store: what the feeds kept of it goes */
    forget: (runId: string) => {
      runInfo.delete(runId);
      for (const [id, n] of nodeInfo) if (n.runId === runId) nodeInfo.delete(id);
    },
  };
}

export type Feeds = ReturnType<typeof runFeeds>;
