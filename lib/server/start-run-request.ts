// `POST /api/runs` (DESIGN: The dashboard, Routes; "Calling AQVEN from a service"), in the order its
// checks run: the caller (editor); the `Prefer: wait` and `Idempotency-Key` headers (400 E_WAIT,
// E_IDEMPOTENCY_KEY); with a key, the body is read and an earlier request with the key answered —
// its run (starting nothing, counting no run start), 422 for another body, 409 while it still
// starts; the caller's limits (429); the body (413, 400); the key claimed; the run started, its
// trace continuing the caller's `traceparent` when one parses; the answer (run-answer.ts).
import 'server-only';
import { dropKey, setKeyRun } from '@/db/idempotency-queries';
import type { Db } from '@/db/types';
import { START_RUN } from '@/lib/contracts/api-routes';
import { noteAuthor } from '@/lib/contracts/add-note';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { idempotencyKey, KEY_IN_FLIGHT_CODE, KEY_REUSED_CODE, keyInFlightMessage, keyReusedMessage } from '@/lib/contracts/idempotency-key';
import { preferWait } from '@/lib/contracts/prefer-wait';
import type { Labels } from '@/lib/contracts/refusal';
import { BODY_CODE } from '@/lib/contracts/request-body';
import { startRefusalCode, startRunRefusal, type StartRunField } from '@/lib/contracts/start-run';
import { parseTraceparent } from '@/lib/contracts/traceparent';
import { routeCaller } from './access';
import { apiRefusal } from './api-refusal';
import { claimOrPrior, priorRequest, startFingerprint, type KeyedRequest, type PriorRequest } from './idempotent-start';
import { readBodyCapped } from './read-body';
import { guardSettings } from './request-guard';
import { answerStartedRun } from './run-answer';
import { serverSession, startRun } from './session';

const FIELDS: Labels<StartRunField> = { flow: 'field "flow"', input: 'field "input"' };

interface StartBody {
  flow: string;
  input: unknown;
}

/** The body as `{flow, input}`, or the refusal: too large (413), not JSON or no flow (400). */
async function readStart(req: Request): Promise<StartBody | Response> {
  // the proxy refused a declared length over the cap; this catches a chunked body without one
  const read = await readBodyCapped(req, guardSettings(process.env).maxBodyBytes);
  if (!read.ok) return apiRefusal(413, read.refusal);
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return apiRefusal(400, { code: BODY_CODE, message: 'request body must be JSON: {"flow": "...", "input": {...}}' });
  }
  // a body that is no object names no flow
  const parsed = START_RUN.body.safeParse(typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});
  return parsed.success ? parsed.data : apiRefusal(400, startRunRefusal(parsed.error, FIELDS));
}

/** The answer to a key an earlier request holds. */
function priorAnswer(prior: Exclude<PriorRequest, { kind: 'none' }>, key: string, started: (runId: string) => Promise<Response>): Promise<Response> | Response {
  if (prior.kind === 'run') return started(prior.runId);
  if (prior.kind === 'reused') return apiRefusal(422, { code: KEY_REUSED_CODE, message: keyReusedMessage(key) });
  return apiRefusal(409, { code: KEY_IN_FLIGHT_CODE, message: keyInFlightMessage(key) }, { retryAfterS: 1 });
}

/** Starts the run with the key claimed (when there is one): the key names the run, or is given back when the start is refused. */
async function startClaimed(db: Db, start: StartBody, author: string | null, claim: { k: KeyedRequest; at: number } | null, traceparent: string | null) {
  const release = () => (claim ? dropKey(db, claim.k.caller, claim.k.key, claim.at) : Promise.resolve(false));
  try {
    const res = await startRun(start.flow, start.input, author, traceparent);
    if (!res.ok) await release();
    else if (claim) await setKeyRun(db, claim.k.caller, claim.k.key, res.id);
    return res;
  } catch (err) {
    await release();
    throw err;
  }
}

export async function startRunRequest(req: Request): Promise<Response> {
  const since = Date.now();
  const caller = await routeCaller(req, 'editor');
  if (caller instanceof Response) return caller;
  const wait = preferWait(req.headers.get('prefer'));
  if (!wait.ok) return apiRefusal(400, wait);
  const keyRead = idempotencyKey(req.headers.get('idempotency-key'));
  if (!keyRead.ok) return apiRefusal(400, keyRead);
  const { db } = await serverSession();
  const started = (replayed: boolean) => (runId: string) => answerStartedRun(db, runId, { waitS: wait.waitS, since, signal: req.signal, replayed });

  let start: StartBody | null = null;
  let k: KeyedRequest | null = null;
  if (keyRead.key !== null) {
    // a request that finds its run starts nothing and counts no run start: its body is read first
    const read = await readStart(req);
    if (read instanceof Response) return read;
    start = read;
    k = { caller: noteAuthor(caller.author), key: keyRead.key, fingerprint: startFingerprint(read.flow, read.input) };
    const prior = await priorRequest(db, k);
    if (prior.kind !== 'none') return priorAnswer(prior, k.key, started(true));
  }
  // the caller's limits (runs per minute, then the spend budget): 429 with Retry-After
  const refused = await callerLimits(db, caller.author, 'run-start');
  if (refused) return apiRefusal(429, refused, { retryAfterS: refused.retryAfterS });
  if (!start) {
    const read = await readStart(req);
    if (read instanceof Response) return read;
    start = read;
  }
  let claim: { k: KeyedRequest; at: number } | null = null;
  if (k) {
    const c = await claimOrPrior(db, k);
    if (c.kind !== 'claimed') return priorAnswer(c, k.key, started(true));
    claim = { k, at: c.at };
  }
  // the caller's trace continues into the run; a malformed traceparent is ignored (W3C Trace Context §3.2.2)
  const res = await startClaimed(db, start, caller.author, claim, parseTraceparent(req.headers.get('traceparent'))?.header ?? null);
  if (!res.ok) return apiRefusal(res.status, { code: startRefusalCode(res), message: res.error }, { field: res.field });
  return started(false)(res.id);
}
