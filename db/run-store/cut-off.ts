// The cut-off sweeps (DESIGN: Storage, "Leases"): what a dead process left open in one of its runs
// — attempts with no outcome, nodes still running or pending — is closed with the dead owner's last
// sign of life as its end, inside the caller's transaction (the sweep, a worker's take-over).
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { cutOffTry } from '@/lib/engine/cut-off-try';
import { capFailureText, redact } from '@/lib/redact';
import { INTERRUPTED_ATTEMPT_ERROR } from '../interrupted-error';
import { capSearchBody, DailySums, nodeSignature, writeDailySums } from '../run-aggregates';
import { cutOffAt } from '../run-lease';
import type { Db, Orm } from '../types';

/**
 * Closes the attempts a dead process cut off in run `runId` (DESIGN: Storage): each never got an
 * outcome; it is marked discarded (it produced no output) with the interrupted error and the dead
 * owner's last sign of life as its end (`cutOffAt`: `lastSeenAt`, not `now`, never before its start),
 * its usage as recorded kept, and its streamed text — the stream_chunks rows, redacted as
 * they were written, after any text a version before them stored in streamed_text, raw — joined,
 * redacted, capped and put in streamed_text; the rows go. A try the attempt's row names as in
 * flight (write-ahead) with no row of its own was sent and never read: it is recorded as cut off
 * (`cutOffTry`), and the attempt's usage marked unknown — the provider may have answered and
 * billed it. Runs inside the caller's transaction (`q`): the sweep that marks a run interrupted
 * (SQLite) and a worker's take-over (PostgreSQL).
 */
export async function closeCutOffAttempts(db: Db, q: Orm, runId: string, lastSeenAt: number | null, now: number): Promise<number> {
  const { attempts, streamChunks, transportTries } = db.t;
  const cut = await q
    .select({
      id: attempts.id,
      text: attempts.streamedText,
      startedAt: attempts.startedAt,
      inFlightTry: attempts.inFlightTry,
      inFlightAt: attempts.inFlightAt,
      inFlightGeneration: attempts.inFlightGeneration,
      usageUnknown: attempts.usageUnknown,
    })
    .from(attempts)
    .where(and(eq(attempts.runId, runId), isNull(attempts.outcome), isNull(attempts.finishedAt)));
  const why = INTERRUPTED_ATTEMPT_ERROR;
  for (const a of cut) {
    const chunks = await q.select({ text: streamChunks.text }).from(streamChunks).where(eq(streamChunks.attemptId, a.id)).orderBy(asc(streamChunks.seq));
    const text = (a.text ?? '') + chunks.map((r) => r.text).join('');
    const end = cutOffAt(lastSeenAt, now, a.startedAt);
    const sent = a.inFlightTry !== null && (await inFlightUnrecorded(db, q, a.id, a.inFlightTry));
    if (sent) {
      const t = cutOffTry({ tryNo: a.inFlightTry!, at: a.inFlightAt ?? a.startedAt, generationId: a.inFlightGeneration }, end);
      // a generation the reply named: its usage looked up later, due at once (as the store's tryRow does)
      await q.insert(transportTries).values({ attemptId: a.id, ...t, usageLookup: t.generationId ? 'pending' : null, lookupAfter: t.generationId ? end : null });
    }
    await q
      .update(attempts)
      .set({
        streamedText: text ? capFailureText(redact(text)) : null,
        discarded: true,
        errorKind: why.kind,
        errorMessage: why.message,
        usageUnknown: a.usageUnknown || sent,
        inFlightTry: null,
        inFlightAt: null,
        inFlightGeneration: null,
        finishedAt: end,
      })
      .where(eq(attempts.id, a.id));
    await q.delete(streamChunks).where(eq(streamChunks.attemptId, a.id));
  }
  return cut.length;
}

/** whether try `tryNo` of attempt `attemptId` has no row: it was in flight when its process died */
async function inFlightUnrecorded(db: Db, q: Orm, attemptId: string, tryNo: number): Promise<boolean> {
  const { transportTries: t } = db.t;
  const rows = await q
    .select({ id: t.id })
    .from(t)
    .where(and(eq(t.attemptId, attemptId), eq(t.tryNo, tryNo)));
  return rows.length === 0;
}

/**
 * Fails the nodes of run `runId` still running or pending when its process died (the sweep,
 * markInterrupted), with `error` and the time the dead owner was last seen alive as their end (`cutOffAt`,
 * never before a node's start): each signed, its text searchable and —
 * in a `flow` run — counted in node_daily and failure_daily, as a node failed by its own run is.
 * Runs inside the caller's transaction (`q`).
 */
export async function failCutOffNodes(
  db: Db,
  q: Orm,
  runId: string,
  error: { code: string; message: string; hint: string },
  lastSeenAt: number | null,
  now: number,
): Promise<number> {
  const { nodeRuns, runs, searchDocs } = db.t;
  const open = await q
    .select({ id: nodeRuns.id, agent: nodeRuns.agent, startedAt: nodeRuns.startedAt, costUsd: nodeRuns.costUsd })
    .from(nodeRuns)
    .where(and(eq(nodeRuns.runId, runId), inArray(nodeRuns.status, ['running', 'pending'])));
  if (!open.length) return 0;
  const [run] = await q.select({ kind: runs.kind }).from(runs).where(eq(runs.id, runId));
  const sums = new DailySums();
  for (const n of open) {
    const sig = nodeSignature(n.agent, error);
    const end = cutOffAt(lastSeenAt, now, n.startedAt);
    await q
      .update(nodeRuns)
      .set({ status: 'failed', errorCode: error.code, errorMessage: error.message, hint: error.hint, finishedAt: end, failureSig: sig.sig })
      .where(eq(nodeRuns.id, n.id));
    await q.insert(searchDocs).values({ runId, nodeRunId: n.id, field: 'error', body: capSearchBody(error.message), at: end });
    if (run?.kind !== 'flow') continue;
    const at = n.startedAt ?? end;
    sums.node(n.agent, 'failed', at, n.startedAt);
    sums.failure({ sig, level: 'node', agent: n.agent, model: '', code: error.code, costUsd: n.costUsd, at });
  }
  await writeDailySums(db, q, sums);
  return open.length;
}
