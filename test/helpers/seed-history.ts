// A run history written straight into the tables, for the reads over it (failure groups, the run
// list, retention): runs, nodes and attempts with their failure signatures, and — for flow runs —
// the daily sums, by the same rules the run store follows (db/run-aggregates.ts).
import { attemptSignature, DailySums, isFailedAttempt, nodeSignature, writeDailySums } from '@/db/run-aggregates';
import type { Db } from '@/db/types';

export type Cause = 'provider_error' | 'refusal' | 'truncated' | 'invalid_output';

export interface SeedAttempt {
  model?: string;
  /** null: an ok answer kept */
  cause?: Cause | null;
  outcome?: 'ok' | 'error' | 'refusal' | 'truncated';
  message?: string | null;
  costUsd?: number;
  startedAt: number;
}

export interface SeedNode {
  nodeId: string;
  agent: string;
  status: 'succeeded' | 'failed' | 'skipped';
  error?: { code: string; message: string };
  attempts?: SeedAttempt[];
  startedAt: number;
  costUsd?: number;
}

export interface SeedRun {
  id: string;
  flow?: string;
  kind?: 'flow' | 'replay' | 'limits';
  replayOf?: string | null;
  status: 'succeeded' | 'failed' | 'running' | 'interrupted';
  startedAt: number;
  nodes: SeedNode[];
}

const OUTCOME: Record<Cause, 'error' | 'refusal' | 'truncated' | 'ok'> = { provider_error: 'error', refusal: 'refusal', truncated: 'truncated', invalid_output: 'ok' };

/** Writes the runs (and, for flow runs, adds to the daily sums). */
export async function seedRuns(db: Db, list: SeedRun[]): Promise<void> {
  const { attempts, nodeRuns, runs } = db.t;
  const sums = new DailySums();
  for (const r of list) {
    const kind = r.kind ?? 'flow';
    const runCost = r.nodes.reduce((s, n) => s + (n.costUsd ?? (n.attempts ?? []).reduce((c, a) => c + (a.costUsd ?? 0), 0)), 0);
    await db.q.insert(runs).values({
      id: r.id,
      project: 'p',
      flow: r.flow ?? 'triage',
      status: r.status,
      startedAt: r.startedAt,
      kind,
      replayOf: r.replayOf ?? null,
      finishedAt: r.status === 'running' ? null : r.startedAt + 1000,
      costUsd: runCost,
      errorCode: r.status === 'failed' ? (r.nodes.find((n) => n.status === 'failed')?.error?.code ?? null) : null,
    });
    for (const [i, n] of r.nodes.entries()) {
      const nodeRunId = `${r.id}-${n.nodeId}`;
      const atts = n.attempts ?? [];
      const nodeCost = n.costUsd ?? atts.reduce((c, a) => c + (a.costUsd ?? 0), 0);
      const nodeSig = n.status === 'failed' && n.error ? nodeSignature(n.agent, n.error) : null;
      await db.q.insert(nodeRuns).values({
        id: nodeRunId,
        runId: r.id,
        nodeId: n.nodeId,
        agent: n.agent,
        turn: 1,
        ord: i,
        status: n.status,
        startedAt: n.startedAt,
        finishedAt: n.startedAt + 500,
        errorCode: n.error?.code ?? null,
        errorMessage: n.error?.message ?? null,
        costUsd: nodeCost,
        failureSig: nodeSig?.sig ?? null,
      });
      for (const [j, a] of atts.entries()) {
        const cause = a.cause ?? null;
        const outcome = a.outcome ?? (cause ? OUTCOME[cause] : 'ok');
        const model = a.model ?? 'sim:a';
        const failed = isFailedAttempt({ outcome, cause });
        const sig = failed ? attemptSignature(n.agent, { model, cause, errorMessage: a.message ?? null }) : null;
        await db.q.insert(attempts).values({
          id: `${nodeRunId}-${j + 1}`,
          nodeRunId,
          runId: r.id,
          seq: j + 1,
          model,
          chainIndex: 0,
          answerNo: j + 1,
          outcome,
          cause,
          action: failed ? 'retry' : 'none',
          errorKind: failed ? cause : null,
          errorMessage: a.message ?? null,
          discarded: failed,
          costUsd: a.costUsd ?? 0,
          startedAt: a.startedAt,
          finishedAt: a.startedAt + 100,
          failureSig: sig?.sig ?? null,
        });
        if (kind !== 'flow') continue;
        sums.attempt(n.agent, {
          model,
          outcome,
          cause,
          action: failed ? 'retry' : 'none',
          inputTokens: 0,
          outputTokens: 0,
          costUsd: a.costUsd ?? 0,
          startedAt: a.startedAt,
          finishedAt: a.startedAt + 100,
        });
        if (sig) sums.failure({ sig, level: 'attempt', agent: n.agent, model, code: cause ?? '', costUsd: a.costUsd ?? 0, at: a.startedAt });
      }
      if (kind !== 'flow') continue;
      sums.node(n.agent, n.status, n.startedAt, n.startedAt);
      if (nodeSig) sums.failure({ sig: nodeSig, level: 'node', agent: n.agent, model: '', code: n.error!.code, costUsd: nodeCost, at: n.startedAt });
    }
  }
  await writeDailySums(db, db.q, sums);
}
