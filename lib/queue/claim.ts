// Who runs a queued run (DESIGN: Storage, "Workers and the queue"): the worker whose compare-and-set
// moves the row from `queued` to `running` under its lease. A job delivered twice, or to two
// workers, is claimed once; the loser finds the run running under a live lease and lets it go, or
// under an expired one and takes it over. The job's lock decides nothing: the row does.
import { explainHint } from '@/lib/shared/run-codes';
import { and, eq, sql } from 'drizzle-orm';
import { LEASE_TTL_MS, PROCESS_OWNER, type Lease } from '@/db/run-lease';
import type { Db, RunError, RunStatus } from '@/db/types';
import { RunInputError, UnknownFlowError, validateRunInput } from '@/lib/flow/run-flow';
import type { Project } from '@/lib/project';
import { own } from '@/lib/shared/own';

/** What a worker found when it tried to claim a run. */
export type Claim =
  /**
   * the run is ours: run it under `lease`; `startedBy` is who queued it (its budget applies: DESIGN, "Spend budgets");
   * `traceparent` the caller's span its trace continues (DESIGN: Observability, "Traces")
   */
  | { kind: 'claimed'; lease: Lease; flow: string; input: unknown; startedBy: string | null; traceparent: string | null }
  /** the run was queued, but its flow or input does not fit the project the worker runs: it is now failed with `error` */
  | { kind: 'refused'; flow: string; error: RunError }
  /** running under a live lease: another worker has it (a duplicate delivery) */
  | { kind: 'held'; owner: string | null }
  /** running, its lease expired: its owner died; take it over (fence is the one to compare against) */
  | { kind: 'expired'; fence: number }
  /** finished or cancelled: nothing to do */
  | { kind: 'over'; status: RunStatus }
  | { kind: 'missing' };

export interface ClaimOptions {
  /** the project the run will run under (the worker's newest snapshot): the flow and input are checked against it */
  project: Project;
  snapshotId: number | null;
  /** the hash of that project's files (runs.project_hash) */
  projectHash?: string | null;
  now?: number;
  owner?: string;
}

/** Why a queued run cannot run under `project`, or null when it can. */
function unfit(project: Project, flowName: string, input: unknown): RunError | null {
  const flow = own(project.flows, flowName);
  try {
    if (!flow) throw new UnknownFlowError(flowName, Object.keys(project.flows));
    // its size was bounded when it was queued: a worker with a lower AQVEN_MAX_INPUT_BYTES does not refuse it now
    validateRunInput(flow, input, { maxBytes: Infinity });
    return null;
  } catch (err) {
    if (err instanceof UnknownFlowError) {
      return {
        code: 'unknown_flow',
        node: null,
        message: err.message,
        hint: explainHint('unknown_flow', 'The flow was removed or renamed after the run was queued; push a project that has it and start the run again.'),
      };
    }
    if (err instanceof RunInputError) {
      return {
        code: 'invalid_input',
        node: null,
        message: err.message,
        hint: explainHint('invalid_input', "The flow's input schema changed after the run was queued; start the run again with an input that fits it."),
      };
    }
    throw err;
  }
}

/**
 * Claims the run `runId` for this worker: `queued` → `running` with a new lease (fence + 1,
 * `started_at` now, the snapshot it runs under), by a compare-and-set on its status. Resolves with
 * what was found (Claim); only `claimed` means the caller runs it.
 */
export async function claimRun(db: Db, runId: string, o: ClaimOptions): Promise<Claim> {
  const now = o.now ?? Date.now();
  const owner = o.owner ?? PROCESS_OWNER;
  const { runs: r } = db.t;
  // two rounds at most: a row that changes between the read and the write is read again once
  for (let round = 0; round < 2; round++) {
    const [row] = await db.q
      .select({ status: r.status, flow: r.flow, input: r.input, fence: r.fence, owner: r.owner, expiresAt: r.leaseExpiresAt, startedBy: r.startedBy, traceparent: r.traceparent })
      .from(r)
      .where(eq(r.id, runId))
      .limit(1);
    if (!row) return { kind: 'missing' };
    if (row.status === 'running') {
      return row.expiresAt !== null && row.expiresAt >= now ? { kind: 'held', owner: row.owner } : { kind: 'expired', fence: row.fence };
    }
    if (row.status !== 'queued') return { kind: 'over', status: row.status };
    const error = unfit(o.project, row.flow, row.input);
    if (error) {
      const done = await db.q
        .update(r)
        .set({
          status: 'failed',
          errorCode: error.code,
          errorNode: null,
          errorMessage: error.message,
          errorHint: error.hint,
          startedAt: now,
          finishedAt: now,
          snapshotId: o.snapshotId,
        })
        .where(and(eq(r.id, runId), eq(r.status, 'queued')))
        .returning({ id: r.id });
      if (done.length === 1) return { kind: 'refused', flow: row.flow, error };
      continue;
    }
    const expiresAt = now + LEASE_TTL_MS;
    const [won] = await db.q
      .update(r)
      .set({
        status: 'running',
        owner,
        fence: sql`${r.fence} + 1`,
        heartbeatAt: now,
        leaseExpiresAt: expiresAt,
        startedAt: now,
        pid: process.pid,
        snapshotId: o.snapshotId,
        ...(o.projectHash !== undefined && { projectHash: o.projectHash }),
      })
      .where(and(eq(r.id, runId), eq(r.status, 'queued')))
      .returning({ fence: r.fence });
    if (won)
      return { kind: 'claimed', lease: { runId, owner, fence: won.fence, expiresAt }, flow: row.flow, input: row.input, startedBy: row.startedBy, traceparent: row.traceparent };
  }
  return { kind: 'held', owner: null }; // changed hands twice while we looked: someone else is on it
}

/**
 * A claimed run that could not be started after all (the run loop threw before its first turn):
 * failed with `error`, by a compare-and-set on our lease, so it is not taken over again and again.
 */
export async function failClaimedRun(db: Db, lease: Lease, error: RunError, now = Date.now()): Promise<boolean> {
  const { runs: r } = db.t;
  const done = await db.q
    .update(r)
    .set({ status: 'failed', errorCode: error.code, errorNode: error.node, errorMessage: error.message, errorHint: error.hint, finishedAt: now })
    .where(and(eq(r.id, lease.runId), eq(r.owner, lease.owner), eq(r.fence, lease.fence), eq(r.status, 'running')))
    .returning({ id: r.id });
  return done.length === 1;
}
