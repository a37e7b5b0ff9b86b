// Taking over a run whose worker died (DESIGN: Storage, "Leases"): a compare-and-set on the run's
// fence claims it, the attempts the dead worker cut off are closed in the same transaction, and the
// run carries on from its stored facts under the new lease — finished nodes are not run again, and
// an unfinished node restarts from its original request with its models' answers counted. The old
// owner's late writes are refused from the claim on (the run store's fencing).
import { explainHint } from '@/lib/shared/run-codes';
import { getRunFacts, type RunKind, type RunOrigin } from '@/db/queries';
import { nodeRunIdsOf } from '@/db/resume-queries';
import { takeOver, type Lease } from '@/db/run-lease';
import { closeCutOffAttempts, runStore } from '@/db/run-store';
import { endHeldModelLimits } from '@/db/limits-queries';
import { transaction } from '@/db/tx';
import type { Db, RunError, RunFacts } from '@/db/types';
import { PROBE_RESUME_HINT } from '@/lib/contracts/limits-probe';
import { sumUsageRounded } from '@/lib/engine/usage';
import { beginRun, RunInputError, UnknownFlowError, type RunFlowOptions, type StartedRun } from './run-flow';
import { replayScope } from './replay';
import { buildRunRecord } from './run-record';

export interface TakeOverOptions extends Pick<RunFlowOptions, 'project' | 'providers' | 'env' | 'clock' | 'gate' | 'fetch' | 'onProgress'> {
  db: Db;
  runId: string;
  /** the fence the expired lease was seen with (expiredLeases): the claim's compare-and-set */
  fence: number;
  /** the time of the take-over (tests inject it); default the clock's, else the wall clock */
  now?: number;
  /** who takes the run over; default this process (PROCESS_OWNER) */
  owner?: string;
}

/**
 * Takes the run over and resumes it under `project` (the worker's newest snapshot), or resolves
 * null when another process was first (or the run was renewed or ended meanwhile). A run whose
 * flow or input no longer fits the project is ended `failed` (unknown_flow, invalid_input). The run
 * keeps who started it and the project hash and snapshot it was recorded with (its row is not
 * rewritten: the facts carry them on).
 */
export async function takeOverRun(o: TakeOverOptions): Promise<StartedRun | null> {
  const { db, runId } = o;
  const now = o.now ?? o.clock?.now() ?? Date.now();
  const lease = await transaction(db, async (q) => {
    const won = await takeOver(db, { runId, fence: o.fence }, now, o.owner, q);
    if (won) await closeCutOffAttempts(db, q, runId, won.lastSeenAt, now);
    return won;
  });
  if (!lease) return null;
  const [facts, nodeRunIds] = await Promise.all([getRunFacts(db, runId), nodeRunIdsOf(db, runId)]);
  if (!facts) throw new Error(`run ${runId} was taken over but cannot be read back`);
  const { project, providers, env, clock, gate, fetch, onProgress } = o;
  // a limits probe is not carried on by another process: it ends interrupted, its rows free to resume
  if (facts.kind === 'limits') return endUnfit(db, lease, facts, nodeRunIds, LIMITS_TAKEN_OVER, now, 'interrupted');
  try {
    // a replay goes on as the one node it replays, never as its whole flow
    const only = await replayScope(db, project, runId);
    return await beginRun({
      project,
      flow: facts.flow,
      input: facts.input,
      providers,
      env,
      clock,
      gate,
      fetch,
      onProgress,
      db,
      runId,
      lease,
      resume: { facts, nodeRunIds },
      ...(only && { only }),
    });
  } catch (err) {
    const error = unfit(err);
    if (!error) throw err;
    return endUnfit(db, lease, facts, nodeRunIds, error, now, 'failed');
  }
}

const LIMITS_TAKEN_OVER: RunError = {
  code: 'interrupted',
  node: null,
  message: "the limits run's process stopped before it ended; a limits run is not carried on by another process",
  hint: explainHint('interrupted', PROBE_RESUME_HINT),
};

/** Why a taken-over run cannot go on under the project (its flow removed, its input no longer valid), or null. */
function unfit(err: unknown): RunError | null {
  if (err instanceof UnknownFlowError) {
    return {
      code: 'unknown_flow',
      node: null,
      message: err.message,
      hint: explainHint('unknown_flow', 'The flow was removed or renamed while the run was going; push a project that has it and start the run again.'),
    };
  }
  if (err instanceof RunInputError) {
    return {
      code: 'invalid_input',
      node: null,
      message: err.message,
      hint: explainHint('invalid_input', "The flow's input schema changed while the run was going; start the run again with an input that fits it."),
    };
  }
  return null;
}

/**
 * Ends a taken-over run that cannot go on: its unfinished nodes fail with `error`, the run ends
 * `status` with it (a limits run: interrupted, the measurements it held left partial).
 */
async function endUnfit(
  db: Db,
  lease: Lease,
  facts: RunFacts & RunOrigin & { kind: RunKind },
  nodeRunIds: ReadonlyMap<string, string>,
  error: RunError,
  now: number,
  status: 'failed' | 'interrupted',
): Promise<StartedRun> {
  const store = runStore(db);
  const open = facts.nodes.filter((n) => (n.status === 'running' || n.status === 'pending') && nodeRunIds.has(n.id));
  store.adoptRun({ id: facts.id, lease, nodeRunIds: open.map((n) => nodeRunIds.get(n.id)!) });
  const nodeError = { code: error.code, message: error.message, hint: error.hint ?? '' };
  for (const n of open) {
    Object.assign(n, { status: 'failed', error: nodeError, finishedAt: now });
    store.finishNode({
      id: nodeRunIds.get(n.id)!,
      runId: facts.id,
      status: 'failed',
      output: null,
      error: nodeError,
      usage: sumUsageRounded(n.attempts.map((a) => a.usage)),
      finishedAt: now,
    });
  }
  Object.assign(facts, { status, error, output: null, finishedAt: now });
  const record = buildRunRecord(facts);
  const done = store.finishRun({ id: facts.id, status, output: null, error, turns: facts.turns, usage: sumUsageRounded([record.usage]), finishedAt: now }).then(async () => {
    if (facts.kind === 'limits') await transaction(db, (q) => endHeldModelLimits(db, q, facts.id, now));
    return record;
  });
  return { runId: facts.id, done, handBack: async () => undefined };
}
