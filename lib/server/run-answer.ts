// The answers that wait for a run (DESIGN: The dashboard, "Calling AQVEN from a service"): `POST
// /api/runs` with `Prefer: wait=N` — 200 and the run record when the run ends within N seconds of
// the request's arrival, else 202 with Location — and `GET /api/runs/:id?wait=N`, the record once
// the run has ended or the wait ran out. The run is followed through the database (waitForRunEnd),
// and a client that goes away (the request's signal) stops the wait.
import 'server-only';
import type { Db } from '@/db/types';
import { LIVE_RUN_STATUSES } from '@/db/types';
import { reply } from '@/lib/contracts/api-route';
import { RUN_RECORD, START_RUN } from '@/lib/contracts/api-routes';
import { waitApplied, waitSeconds } from '@/lib/contracts/prefer-wait';
import { getRunRecord } from '@/lib/flow/stored-run';
import { waitForRunEnd, type RunWaitOptions } from '@/lib/flow/run-wait';
import { routeCaller } from './access';
import { apiRefusal } from './api-refusal';
import { routedRun, runRoute } from './run-route';

export interface RunAnswerOptions extends Omit<RunWaitOptions, 'signal'> {
  /** the seconds `Prefer: wait` asked for; null: not asked */
  waitS: number | null;
  /** when the request arrived: the wait counts from there */
  since: number;
  signal?: AbortSignal;
  /** an Idempotency-Key found the run: said in `Idempotent-Replayed`, and its current state is answered (wait 0) */
  replayed: boolean;
}

/** `POST /api/runs`'s answer for run `runId`: its record (200) if it ends within the wait, else 202 with Location. */
export async function answerStartedRun(db: Db, runId: string, o: RunAnswerOptions): Promise<Response> {
  const now = o.now ?? Date.now;
  const location = `/api/runs/${runId}`;
  const replayed: Record<string, string> = o.replayed ? { 'idempotent-replayed': 'true' } : {};
  const waitMs = o.waitS === null ? (o.replayed ? 0 : null) : Math.max(0, o.waitS * 1000 - (now() - o.since));
  if (waitMs !== null && (await waitForRunEnd(db, runId, waitMs, o)) === 'ended') {
    const record = await getRunRecord(db, runId);
    const applied: Record<string, string> = o.waitS === null ? {} : { 'preference-applied': waitApplied(o.waitS) };
    if (record) return reply(START_RUN, 200, record, { location, ...applied, ...replayed });
  }
  return reply(START_RUN, 202, { id: runId }, { location, ...replayed });
}

/** `GET /api/runs/:id` with `?wait=N`: the record once the run has ended, or as it is when the wait runs out. */
export async function runRecordAnswer(req: Request, params: Promise<{ id: string }>): Promise<Response> {
  const asked = waitSeconds(new URL(req.url).searchParams.get('wait'), '?wait');
  if (!asked.ok) {
    // who is asking first, as for every answer of this route
    const caller = await routeCaller(req, 'viewer');
    return caller instanceof Response ? caller : apiRefusal(400, asked);
  }
  if (!asked.waitS) return runRoute(req, params, getRunRecord);
  const routed = await routedRun(req, params, getRunRecord);
  if (routed instanceof Response) return routed;
  if (!LIVE_RUN_STATUSES.includes(routed.value.status)) return reply(RUN_RECORD, 200, routed.value);
  await waitForRunEnd(routed.db, routed.runId, asked.waitS * 1000, { signal: req.signal });
  return reply(RUN_RECORD, 200, (await getRunRecord(routed.db, routed.runId)) ?? routed.value);
}
