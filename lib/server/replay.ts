// The dashboard's replays (DESIGN: The dashboard, "Replay with the current policy"): previewed and
// started under the project as it is now (refreshSession: the folder's files, or the newest
// snapshot), against the session's providers — the configured ones, or the simulator under
// AQVEN_SIMULATE. Replays run in this process in both modes (PostgreSQL too: a replay is one node,
// started by a person looking at the page; the queue's workers run whole flows), each counted
// against the caller's run starts and spend budget (callerLimits). A batch's progress is stored in replay_batches as
// it goes (any dashboard process reads it) and cached in memory here while this process runs it;
// its replays are runs of kind `replay` with their replay_of.
import 'server-only';
import { replayLink, replaysOf, type ReplaySummary } from '@/db/replay-queries';
import { getRunFacts } from '@/db/queries';
import type { RunIdMatch } from '@/db/run-id-queries';
import { StorageError } from '@/db/storage-error';
import type { NodeFacts, RunFacts } from '@/db/types';
import {
  estimateBasis,
  estimateReplay,
  planReplay,
  policyChanges,
  promptDiff,
  ReplayRefusedError,
  startReplay,
  type DiffLine,
  type ReplayDeps,
  type ReplayEstimate,
} from '@/lib/flow/replay';
import { runReplayBatch, type BatchItem, type BatchProgress } from '@/lib/flow/replay-batch';
import { BatchRecorder, recentBatches, storedBatchView, type BatchSummary, type BatchView } from '@/lib/flow/replay-batch-store';
import { ProjectInvalidError, refreshSession, type Session } from '@/lib/flow/session';
import { newRecordId } from '@/lib/shared/record-id';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { BATCH_CONCURRENCY } from '@/lib/contracts/replay';
import type { Caller } from './access';
import { serverSession } from './session';

/** `ambiguous`: the short id or prefix names several runs (E_RUN_AMBIGUOUS), listed to pick from */
export type ReplayRefusal = { ok: false; code: string; error: string; ambiguous?: { matches: RunIdMatch[]; more: boolean } };

/** The session brought up to date; a folder that now fails check refuses the replay (no run under files that are gone). */
async function currentSession(): Promise<{ ok: true; s: Session } | ReplayRefusal> {
  const s = await serverSession();
  try {
    await refreshSession(s);
  } catch (err) {
    if (!(err instanceof ProjectInvalidError)) throw err;
    // PostgreSQL: the newest snapshot fails check; the one the session runs stays
    if (s.snapshotId === null) return { ok: false, code: 'E_PROJECT', error: err.message };
  }
  return { ok: true, s };
}

/** One consistent view of the session for a replay: a refresh for another request may swap it meanwhile. */
function depsOf(s: Session, startedBy: string | null): ReplayDeps {
  const { project, providers, env, db, snapshotId, projectHash } = s;
  return { project, providers, env, db, snapshotId, projectHash, startedBy };
}

const refusal = (err: unknown): ReplayRefusal | null =>
  err instanceof ReplayRefusedError ? { ok: false, code: err.code, error: err.message, ...(err.ambiguous && { ambiguous: err.ambiguous }) } : null;

export interface ReplayPreview {
  ok: true;
  /** the original run's full id (the page may have been opened with its short id) */
  runId: string;
  nodeId: string;
  flow: string;
  agent: string;
  original: NodeFacts;
  diff: { changed: boolean; lines: DiffLine[] };
  /** `field: before ⇒ now` for each policy field that changed */
  policy: string[];
  chainNow: string[];
  estimate: ReplayEstimate;
  /** how the estimate was made, in a sentence */
  basis: string;
  /** the providers are the simulator (AQVEN_SIMULATE) */
  simulated: boolean;
  /** earlier replays of this node, newest first */
  earlier: ReplaySummary[];
}

/** What the preview page shows before a replay starts: the prompt diff, the policy changes, the estimate; `runId` may be a short id or prefix. */
export async function replayPreview(runId: string, nodeId: string): Promise<ReplayPreview | ReplayRefusal> {
  const cur = await currentSession();
  if (!cur.ok) return cur;
  const { project, db } = cur.s;
  try {
    const plan = await planReplay(db, project, runId, nodeId);
    const estimate = await estimateReplay(db, plan);
    return {
      ok: true,
      runId: plan.runId,
      nodeId,
      flow: plan.flow,
      agent: plan.agent,
      original: plan.original,
      diff: promptDiff(plan),
      policy: policyChanges(plan.policyBefore, plan.policyNow),
      chainNow: plan.policyNow.chain,
      estimate,
      basis: estimateBasis(estimate),
      simulated: cur.s.simulated !== null,
      earlier: (await replaysOf(db, plan.runId)).filter((r) => r.node === nodeId),
    };
  } catch (err) {
    const r = refusal(err);
    if (r) return r;
    throw err;
  }
}

/**
 * Starts the replay of one node: the caller's run starts counted first, and their daily spend
 * budget checked (E_BUDGET), the plan made again under the files as they are now, refused when its
 * estimate is over `capUsd`; the id answers once the replay's run row is committed, and the replay
 * goes on in this process (its attempts checked against the budget too: lib/flow/flow-run.ts).
 */
export async function replayNodeNow(caller: Caller, runId: string, nodeId: string, capUsd: number): Promise<{ ok: true; id: string } | ReplayRefusal> {
  const refused = await callerLimits((await serverSession()).db, caller.author, 'run-start');
  if (refused) return { ok: false, code: refused.code, error: refused.message };
  const cur = await currentSession();
  if (!cur.ok) return cur;
  const deps = depsOf(cur.s, caller.author);
  try {
    const plan = await planReplay(deps.db, deps.project, runId, nodeId);
    const estimate = await estimateReplay(deps.db, plan);
    const started = await startReplay(plan, deps, { capUsd, estimateUsd: estimate.costUsd });
    void started.done.catch((err: unknown) => console.error(`aqven: replay ${started.runId} stopped: ${err instanceof Error ? err.message : String(err)}`));
    return { ok: true, id: started.runId };
  } catch (err) {
    const r = refusal(err);
    if (r) return r;
    if (err instanceof StorageError) return { ok: false, code: 'E_STORAGE', error: err.message };
    throw err;
  }
}

// ── batches ──

export type { BatchView } from '@/lib/flow/replay-batch-store';

/** finished batches kept in memory for their progress page; the oldest go first (the database keeps them all) */
const KEEP_BATCHES = 20;
const g = globalThis as { __aqvenReplayBatches?: Map<string, BatchView> };
const batches = (g.__aqvenReplayBatches ??= new Map());

function remember(view: BatchView): void {
  batches.set(view.id, view);
  for (const [id, b] of batches) {
    if (batches.size <= KEEP_BATCHES) break;
    if (b.done) batches.delete(id);
  }
}

/** Forgets this process's views of its batches, as a new process knows none (the integration tests' shared process, between files). */
export function forgetBatchesForTests(): void {
  batches.clear();
}

/**
 * A batch's progress: this process's own view while it runs the batch, else the stored row (any
 * process, or this one after a restart) — a batch whose process stopped reads as stopped; null for
 * an id never stored.
 */
export async function batchProgress(id: string, now = Date.now()): Promise<BatchView | null> {
  const mine = batches.get(id);
  if (mine) return mine;
  const { db } = await serverSession();
  return storedBatchView(db, id, now);
}

/** The newest replay batches, any process's, of one failure group when `label` is given. */
export async function recentReplayBatchList(o: { limit: number; label?: string }, now = Date.now()): Promise<BatchSummary[]> {
  const { db } = await serverSession();
  return recentBatches(db, now, o);
}

/**
 * Starts replaying `items` in the background, BATCH_CONCURRENCY at a time under `capUsd` for the
 * whole batch, each replay counted against the caller's run starts and checked against their daily
 * spend budget (a refusal stops the batch) and
 * run under the files as they are when it starts. Its row is stored before the id is answered (a
 * failed write is logged and the batch goes on); its progress is written as it goes (BatchRecorder).
 */
export async function replayBatchNow(caller: Caller, label: string, items: BatchItem[], capUsd: number): Promise<{ ok: true; batchId: string; total: number }> {
  const id = newRecordId();
  const meta = { id, label, startedBy: caller.author, startedAt: Date.now() };
  const first: BatchProgress = {
    total: items.length,
    concurrency: BATCH_CONCURRENCY,
    capUsd,
    spentUsd: 0,
    counts: { waiting: items.length, running: 0, succeeded: 0, failed: 0, refused: 0, not_started: 0 },
    peakRunning: 0,
    done: items.length === 0,
    stopped: null,
    items: items.map((i) => ({ ...i, state: 'waiting', replayRunId: null, reason: null, estimateUsd: null, costUsd: 0 })),
  };
  const view: BatchView = { ...meta, ...first };
  remember(view);
  const { db } = await serverSession();
  const recorder = new BatchRecorder(db, meta, first, {
    onWriteError: (err) =>
      console.error(
        `aqven: replay batch ${id}: its progress could not be stored (the batch goes on; other processes may not see it): ${err instanceof Error ? err.message : String(err)}`,
      ),
  });
  if (items.length === 0) {
    await recorder.finish(first);
    return { ok: true, batchId: id, total: 0 };
  }
  await recorder.start();
  let last = first;
  const update = (p: BatchProgress) => {
    last = p;
    batches.set(id, { ...meta, ...p });
    recorder.progress(p);
  };
  void runReplayBatch(items, {
    concurrency: BATCH_CONCURRENCY,
    capUsd,
    // each replay counts as a run start, and none starts once the caller's budget is spent
    admit: async () => (await callerLimits(db, caller.author, 'run-start'))?.message ?? null,
    deps: async () => {
      const cur = await currentSession();
      if (!cur.ok) throw new Error(cur.error);
      return depsOf(cur.s, caller.author);
    },
    onProgress: update,
  })
    .then((p) => {
      batches.set(id, { ...meta, ...p });
      return recorder.finish(p);
    })
    .catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      const ended: BatchProgress = { ...last, done: true, stopped: last.stopped ?? `the batch stopped: ${why}` };
      batches.set(id, { ...meta, ...ended });
      console.error(`aqven: replay batch ${id} stopped: ${why}`);
      return recorder.finish(ended);
    })
    .catch(() => undefined);
  return { ok: true, batchId: id, total: items.length };
}

// ── the run page ──

export type ReplayContext =
  /** this run replays a node of another: both nodes, for the side-by-side view */
  | { kind: 'replay'; replayOf: string | null; node: string; original: { run: RunFacts; node: NodeFacts | null } | null }
  /** a flow run: the replays of its nodes, newest first */
  | { kind: 'flow'; replays: ReplaySummary[] }
  | null;

/** What the run page shows about replays: the original beside this replay, or this run's replays. */
export async function replayContext(runId: string): Promise<ReplayContext> {
  const { db } = await serverSession();
  const link = await replayLink(db, runId);
  if (!link || link.kind === 'limits') return null;
  if (link.kind === 'flow') {
    const replays = await replaysOf(db, runId);
    return replays.length ? { kind: 'flow', replays } : null;
  }
  const node = link.replayNode ?? '';
  const run = link.replayOf ? await getRunFacts(db, link.replayOf) : null;
  return { kind: 'replay', replayOf: link.replayOf, node, original: run ? { run, node: run.nodes.find((n) => n.id === node) ?? null } : null };
}
