// A run becomes a job (DESIGN: Storage, "Workers and the queue"): checked first — an unknown flow or
// an input its schema refuses is an error for the caller, never a queued job — then its row
// (status `queued`, fence 0, no owner) and its graphile-worker job are committed in one transaction.
import { transaction } from '@/db/tx';
import type { PgDb } from '@/db/types';
import { parseTraceparent } from '@/lib/contracts/traceparent';
import { UnknownFlowError, validateRunInput } from './run-flow';
import type { Project } from '@/lib/project';
import { own } from '@/lib/shared/own';
import { newRecordId } from '@/lib/shared/record-id';
import { addRunJob, ensureQueueSchema } from '@/db/queue-jobs';

export interface EnqueueOptions {
  db: PgDb;
  /** the project the run is checked against: the snapshot the caller's session runs */
  project: Project;
  snapshotId: number | null;
  /** sha256 of the project's files (Session.projectHash), recorded with the run */
  projectHash?: string | null;
  /** who queues the run: a user's name, `token:<name>`, `cli:<login>`; recorded with the run */
  startedBy?: string | null;
  /** the caller's span the run continues (a W3C traceparent): stored, so the worker's run continues it; a malformed one is ignored */
  traceparent?: string | null;
  flow: string;
  input: unknown;
  runId?: string;
  now?: number;
}

/**
 * Checks the flow and its input against `project` (UnknownFlowError, RunInputError naming the
 * field or the size bound), then commits the queued run — with who queued it and the project's
 * hash — and its job together. Resolves with the run id once both
 * are committed: a worker may pick the run up from then on.
 */
export async function enqueueRun(o: EnqueueOptions): Promise<string> {
  const flow = own(o.project.flows, o.flow);
  if (!flow) throw new UnknownFlowError(o.flow, Object.keys(o.project.flows));
  validateRunInput(flow, o.input);
  await ensureQueueSchema(o.db);
  const id = o.runId ?? newRecordId();
  const now = o.now ?? Date.now();
  const parent = parseTraceparent(o.traceparent);
  const { runs } = o.db.t;
  await transaction(o.db, async (q) => {
    await q.insert(runs).values({
      id,
      project: o.project.name,
      flow: flow.name,
      status: 'queued',
      input: o.input,
      fence: 0,
      // a queued run has not started: started_at becomes the claim's time; until then the list sorts it by when it was queued
      startedAt: now,
      queuedAt: now,
      snapshotId: o.snapshotId,
      projectHash: o.projectHash ?? null,
      startedBy: o.startedBy ?? null,
      traceparent: parent?.header ?? null,
      // the caller's trace is the run's, whoever runs it; a worker tracing a run without one writes its own
      traceId: parent?.traceId ?? null,
    });
    await addRunJob(q, id);
  });
  return id;
}
