// A node run's facts (DESIGN: Storage): its first row and its end, both written behind; a node
// that ends before its queued row is written is written once, whole (NodeRow). Its end feeds the
// search docs (its output, or its failure's text) and, in a `flow` run, node_daily and
// failure_daily (signed by db/run-aggregates.ts's nodeSignature).
import { capSearchBody, nodeSignature, valueSearchText } from '../run-aggregates';
import { jsonText, type StoreContext } from './context';
import type { NodeEnd, NodeRow } from './feeds';
import type { Statements, ValuesOf } from './statements';
import type { RunStore } from './types';

type InsertNodeArgs = Parameters<RunStore['insertNode']>[0];

/**
 * A node's first row: as it started, or whole with its end (`e`) when it ended before that row
 * was written. One literal for both inserts (the hot path spreads nothing).
 */
const nodeRow = (n: InsertNodeArgs, e: NodeEnd | null): ValuesOf<Statements['insertNode']> & ValuesOf<Statements['insertEndedNode']> => ({
  id: n.id,
  runId: n.runId,
  nodeId: n.nodeId,
  agent: n.agent,
  turn: n.turn,
  ord: n.ord,
  policy: n.policy,
  startedAt: n.startedAt,
  status: e ? e.status : n.status,
  // a skipped node is final from its first row
  finishedAt: e ? e.finishedAt : n.status === 'skipped' ? n.startedAt : null,
  output: e?.output ?? null,
  errorCode: e?.errorCode ?? null,
  errorMessage: e?.errorMessage ?? null,
  hint: e?.hint ?? null,
  inputTokens: e?.inputTokens ?? 0,
  outputTokens: e?.outputTokens ?? 0,
  costUsd: e?.costUsd ?? 0,
  failureSig: e?.failureSig ?? null,
});

export function nodeFacts({ s, feeds, queue }: StoreContext): Pick<RunStore, 'insertNode' | 'finishNode'> {
  const { runInfo, nodeInfo, sums } = feeds;
  return {
    insertNode: (n) => {
      // a run this store did not insert or adopt is fenced as before, and fed into no sum
      const run = runInfo.get(n.runId) ?? { kind: null, startedAt: n.startedAt ?? 0, inputDoc: null, caller: null };
      const row: NodeRow = { written: false, end: null };
      if (n.status === 'running') nodeInfo.set(n.id, { runId: n.runId, run, agent: n.agent, startedAt: n.startedAt, row });
      queue.later(n.runId, () => {
        row.written = true;
        if (row.end) return s.insertEndedNode.run(nodeRow(n, row.end));
        s.insertNode.run(nodeRow(n, null));
        // a skipped node is final from its first row
        if (n.status === 'skipped' && run.kind === 'flow') sums.node(n.agent, 'skipped', n.startedAt ?? run.startedAt, n.startedAt);
      });
    },
    finishNode: (n) => {
      const node = nodeInfo.get(n.id);
      nodeInfo.delete(n.id);
      // a node of a run the store let go (lost, handed back) is no longer known here: its run still fences it
      const runId = node?.runId ?? n.runId ?? null;
      const agent = node?.agent ?? null;
      const sig = n.status === 'failed' && n.error && agent !== null ? nodeSignature(agent, n.error) : null;
      const output = jsonText(n.output);
      const { error: e, usage: u } = n;
      const end: NodeEnd = {
        status: n.status,
        output,
        errorCode: e?.code ?? null,
        errorMessage: e?.message ?? null,
        hint: e?.hint ?? null,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        costUsd: u.costUsd,
        finishedAt: n.finishedAt,
        failureSig: sig?.sig ?? null,
        id: n.id,
      };
      // a row still queued is written whole where it was queued
      const row = node?.row && !node.row.written ? node.row : null;
      if (row) row.end = end;
      queue.later(runId, () => {
        if (!row) s.finishNode.run(end);
        if (runId === null) return;
        const body = n.status === 'succeeded' ? valueSearchText(n.output, output) : e?.message ? capSearchBody(e.message) : null;
        if (body) s.searchDoc.run({ runId, nodeRunId: n.id, attemptId: null, field: n.status === 'succeeded' ? 'output' : 'error', body, at: n.finishedAt });
        if (agent === null || node!.run.kind !== 'flow') return;
        const at = node!.startedAt ?? n.finishedAt;
        sums.node(agent, n.status, at, node!.startedAt);
        if (sig) sums.failure({ sig, level: 'node', agent, model: '', code: e!.code, costUsd: u.costUsd, at });
      });
    },
  };
}
