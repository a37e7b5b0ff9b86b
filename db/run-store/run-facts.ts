// A run's own facts (DESIGN: Storage): its first row with its lease (a durable point: no provider is
// called before it is committed), its turns, its end (durable), and a run adopted or handed back.
import { LEASE_TTL_MS, newLease, releaseLease, type Lease } from '../run-lease';
import { valueSearchText } from '../run-aggregates';
import { jsonText, type StoreContext } from './context';
import { startedRun, type RunInfo } from './feeds';
import type { RunStore } from './types';

type InsertRunArgs = Parameters<RunStore['insertRun']>[0] & { lease: Lease };
type FinishRunArgs = Parameters<RunStore['finishRun']>[0];

/** the two durable writes of a run: its first row, its end */
function runWrites({ s, fencing, queue }: StoreContext) {
  const insertRun = queue.durable(
    (_r: InsertRunArgs) => null, // the lease's acquisition: nothing to check yet
    (r: InsertRunArgs) => {
      const { lease } = r;
      const input = jsonText(r.input);
      s.insertRun.run({
        id: r.id,
        project: r.project,
        flow: r.flow,
        input,
        pid: process.pid,
        owner: lease.owner,
        fence: lease.fence,
        heartbeatAt: lease.expiresAt - LEASE_TTL_MS,
        leaseExpiresAt: lease.expiresAt,
        snapshotId: r.snapshotId ?? null,
        projectHash: r.projectHash ?? null,
        startedBy: r.startedBy ?? null,
        kind: r.kind ?? 'flow',
        replayOf: r.replayOf ?? null,
        replayNode: r.replayNode ?? null,
        startedAt: r.startedAt,
        traceId: r.traceId ?? null,
        traceparent: r.traceparent ?? null,
      });
      fencing.wrote(r.id, lease); // the row was just written with our lease
      const body = valueSearchText(r.input, input);
      if (body) s.searchDoc.run({ runId: r.id, nodeRunId: null, attemptId: null, field: 'input', body, at: r.startedAt });
    },
  );
  const finishRun = queue.durable(
    (r: FinishRunArgs) => r.id,
    (r: FinishRunArgs) =>
      s.finishRun.run({
        status: r.status,
        output: r.output,
        errorCode: r.error?.code ?? null,
        errorNode: r.error?.node ?? null,
        errorMessage: r.error?.message ?? null,
        errorHint: r.error?.hint ?? null,
        turns: r.turns,
        inputTokens: r.usage.inputTokens,
        outputTokens: r.usage.outputTokens,
        costUsd: r.usage.costUsd,
        finishedAt: r.finishedAt,
        id: r.id,
      }),
  );
  return { insertRun, finishRun };
}

/** A run whose row exists already carries on here with its lease (RunStore.adoptRun). */
function adoptRun({ s, fencing, feeds, adopt, queue, keeper }: StoreContext): RunStore['adoptRun'] {
  return (r) => {
    fencing.leases.set(r.id, r.lease);
    fencing.lost.delete(r.id);
    if (r.onLost) fencing.onLost.set(r.id, r.onLost);
    // its kind, start and input, and its open nodes' agents, are read once (SQLite at once; PostgreSQL before its next commit)
    const run: RunInfo = { kind: null, startedAt: 0, inputDoc: null, caller: null };
    feeds.runInfo.set(r.id, run);
    const nodeIds = r.nodeRunIds ?? [];
    for (const n of nodeIds) feeds.nodeInfo.set(n, { runId: r.id, run, agent: null, startedAt: null });
    adopt.adopt(r.id, nodeIds);
    // a claimed queued run's input was never indexed (its row was enqueued, not inserted here)
    queue.later(r.id, () => {
      if (run.inputDoc !== null) s.searchDoc.run({ runId: r.id, nodeRunId: null, attemptId: null, field: 'input', body: run.inputDoc, at: run.startedAt });
      run.inputDoc = null;
    });
    const { traceId } = r;
    if (traceId) queue.later(r.id, () => s.setRunTrace.run({ traceId, id: r.id }));
    keeper.hold(r.lease, (err) => fencing.tell(r.id, err));
  };
}

export function runFacts(ctx: StoreContext): Pick<RunStore, 'insertRun' | 'adoptRun' | 'releaseRun' | 'finishRun' | 'setRunTurns'> {
  const { db, s, fencing, feeds, queue, keeper, turnsDue } = ctx;
  const { leases, onLost, lost } = fencing;
  const writes = runWrites(ctx);
  return {
    insertRun: (r) => {
      const lease = r.lease ?? newLease(r.id, Date.now());
      leases.set(r.id, lease);
      fencing.inserting.add(r.id);
      feeds.runInfo.set(r.id, startedRun(r));
      const lostHandler = r.onLost;
      if (lostHandler) onLost.set(r.id, lostHandler);
      return writes.insertRun({ ...r, lease }).then(
        () => keeper.hold(lease, (err) => fencing.tell(r.id, err)),
        (err: unknown) => {
          leases.delete(r.id);
          fencing.inserting.delete(r.id);
          onLost.delete(r.id);
          feeds.runInfo.delete(r.id);
          fencing.sqlite?.forget(r.id); // its row was rolled back
          throw err;
        },
      );
    },
    adoptRun: adoptRun(ctx),
    releaseRun: async (id, now) => {
      // the closing facts first: the next owner must find them committed
      await queue.commit();
      const lease = leases.get(id);
      leases.delete(id);
      onLost.delete(id);
      keeper.drop(id);
      ctx.forget(id);
      const ours = !!lease && !lost.has(id);
      lost.add(id); // a late fact of the run is refused, not written unfenced
      return ours && releaseLease(db, lease, now);
    },
    finishRun: (r) => {
      turnsDue.delete(r.id); // the run's end writes its turns
      return writes.finishRun(r).finally(() => {
        // the run is over: its lease is no longer renewed (its status frees it for sweeps)
        leases.delete(r.id);
        onLost.delete(r.id);
        keeper.drop(r.id);
        feeds.runInfo.delete(r.id);
        fencing.sqlite?.forget(r.id);
      });
    },
    // one queued write per run carries its latest turn count; none once the run's end (which writes it) is queued
    setRunTurns: (id, turns) => {
      const queued = turnsDue.has(id);
      turnsDue.set(id, turns);
      if (queued) return;
      queue.later(id, () => {
        const due = turnsDue.get(id);
        turnsDue.delete(id);
        if (due !== undefined) s.setRunTurns.run({ turns: due, id });
      });
    },
  };
}
