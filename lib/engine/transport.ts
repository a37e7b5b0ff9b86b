// Transport (DESIGN: Transport retry and rate limits): the HTTP tries of one attempt. Each try
// waits at the model's rate-limit gate, then goes out (one-try.ts); a transient failure is tried
// again after the server's wait (a minimum) or a backoff, a plain client error never is, and a 429
// pauses the model at the gate. What comes back is the provider's reply, normalised by the adapter,
// or a failure that ends the attempt as outcome `error` (kind transport / client_error).
import type { AdapterResult, ReportedUsage } from './adapter';
import { backoffMs, TRANSPORT_BACKOFF_DEFAULT, transportBackoffMs } from './backoff';
import { fmtDuration } from './duration-text';
import { oneTry, TryAborted, usageSeen, type TryDeps, type TryFailure, type TryOutcome, type TryRequest } from './one-try';
import { pauseFor429, type Acquired, type GateLease, type RateGate } from './rate-gate';
import type { Clock, EngineEvent, ResolvedProvider, SharedPauses, TryRecord } from './types';

export interface TransportDeps extends TryDeps {
  gate: RateGate;
  sharedPauses?: SharedPauses;
  /** write-ahead: try `tryNo` is about to leave; awaited first (a rejection sends nothing) */
  onSend: (tryNo: number, at: number) => Promise<void>;
  /** the try's reply named its generation (OpenRouter's x-generation-id): kept with the try in flight, so a cut-off one can be looked up */
  onGeneration?: (tryNo: number, generationId: string) => void;
  onTry: (t: TryRecord) => Promise<void>;
  onPause: (e: Extract<EngineEvent, { type: 'rate_limit_pause' }>) => Promise<void>;
}

export interface TransportRequest extends TryRequest {
  /** the model string: the gate's key */
  model: string;
}

export type TransportResult =
  | {
      ok: true;
      status: number;
      response: AdapterResult;
      tries: TryRecord[];
      usage: ReportedUsage[];
      /** an earlier try's reply was not read to its end, or this one reported no usage: the provider may have billed tokens `usage` lacks */
      usageUnknown: boolean;
      streamedText: string | null;
    }
  | {
      ok: false;
      /** `quota`: the provider said the quota or spend limit is spent — not resent to this model, no pause;
       * `refusal`: the provider declined with an HTTP error (moderation, a content filter) — outcome refusal */
      kind: 'transport' | 'client_error' | 'quota' | 'refusal';
      message: string;
      /** the last error body or network error, redacted */
      detail: string | null;
      status: number | null;
      tries: TryRecord[];
      usage: ReportedUsage[];
      /** some try's reply was not read to its end (size limit, timeout, break after the headers) */
      usageUnknown: boolean;
      /** a stream's last broken try, raw (the caller stores it redacted, as discarded) */
      streamedText: string | null;
      /** the rate-limit gate refused the first try: nothing was sent, so this is no answer (null otherwise) */
      notSent: NotSent | null;
      /**
       * the tries ended because the server asked to wait longer than `on_rate_limit.max_wait`: the
       * attempt was an answer, but resending to this model before that wait cannot help (null otherwise)
       */
      waitTooLong: { setting: 'on_rate_limit.max_wait'; now: string } | null;
    };

/**
 * Why the gate refused to send the attempt's first try, and the provider setting whose limit the
 * wait passed (DESIGN: Outcome policies, repair and budgets): resending to the same model at once
 * cannot help, so the policy never retries it.
 */
export interface NotSent {
  waitingFor: 'pause' | 'probe' | 'slot';
  setting: 'on_rate_limit.max_wait' | 'transport.budget';
  /** the setting's value, in words ("60 s") */
  now: string;
}

/**
 * The caller aborted the attempt (its run was stopped: DESIGN: Storage, "Stopping a run"), during
 * a try or a wait. Carries the caller's `reason` and what the provider had reported: the usage of
 * the tries over, and the cut-off try's usage as far as its stream had reported it.
 * `usageUnknown`: some try may have been billed for tokens `usage` lacks — the cut-off try had
 * reported no usage yet (a body, or a stream before its usage), or an earlier try was not read to
 * its end. An abort during a wait (no try in flight) adds nothing unknown.
 */
export class TransportAborted extends Error {
  constructor(
    readonly reason: unknown,
    readonly usage: ReportedUsage[],
    readonly usageUnknown: boolean,
  ) {
    super(reason instanceof Error ? reason.message : 'aborted');
    this.name = 'TransportAborted';
  }
}

/** Failed tries so far, per limit: 429s count against on_rate_limit, the rest against transport. */
interface FailureCounts {
  rateLimited: number;
  other: number;
}

type GiveUpKind = Extract<TransportResult, { ok: false }>['kind'];
type NextStep = { retry: true; sleepMs: number } | { retry: false; kind: GiveUpKind; message: string; waitTooLong?: true };

interface FailureContext {
  tryNo: number;
  /** the pause a transient 429 set; null for any other failure */
  wait429: number | null;
  counts: FailureCounts;
  /** the next backoff; drawn only once the try limits allow another try (it consumes randomness) */
  backoff: () => number;
  /** what is left of the attempt's transport.budget */
  leftMs: number;
  provider: ResolvedProvider;
}

/** After a failed try: why the tries end, one rule per `if`, or the wait before the next one. */
function afterFailure(f: TryFailure, { tryNo, wait429, counts, backoff, leftMs, provider }: FailureContext): NextStep {
  const { onRateLimit, transport } = provider;
  const stop = (kind: GiveUpKind, message: string): NextStep => ({ retry: false, kind, message });

  // the provider declined to answer: a refusal, which the agent's on_refusal decides
  if (f.refusal) return stop('refusal', f.message);
  // a spent quota: waiting will not clear it, and the model is not paused for the others
  if (f.quota) return stop('quota', f.message);
  // the server rejected the request itself, or said not to retry: resending cannot help
  if (!f.transient) return stop('client_error', f.message);
  // 429s have their own limit, first try included
  if (wait429 !== null && counts.rateLimited >= onRateLimit.maxAttempts) {
    return stop('transport', `${f.message}; gave up after ${tryNo} tries (on_rate_limit.max_attempts: ${onRateLimit.maxAttempts})`);
  }
  // every other transient failure counts against transport.max_attempts, first try included
  if (wait429 === null && counts.other >= transport.maxAttempts) {
    return stop('transport', `${f.message}; gave up after ${tryNo} tries (transport.max_attempts: ${transport.maxAttempts})`);
  }
  // the server's wait is a minimum, waited exactly (no jitter on top); without one, a backoff:
  // on_rate_limit.default_wait's for a 429 (drawn in tryUnderLease), transport.backoff's otherwise
  const wait = wait429 ?? f.waitMs ?? backoff();
  // a server wait above max_wait: don't sleep into certain failure
  if (f.waitMs !== null && wait > onRateLimit.maxWaitMs) {
    const message = `${f.message}; the server asked to wait ${fmtDuration(wait)}, longer than on_rate_limit.max_wait (${fmtDuration(onRateLimit.maxWaitMs)}): not retried`;
    return { retry: false, kind: 'transport', message, waitTooLong: true };
  }
  // a wait past the attempt's transport.budget
  if (wait > leftMs) {
    return stop(
      'transport',
      `${f.message}; the next try would wait ${fmtDuration(wait)}, longer than the ${fmtDuration(Math.max(0, leftMs))} left of transport.budget (${fmtDuration(transport.budgetMs)}): not retried`,
    );
  }
  // a 429's wait is served at the gate (the pause); other waits sleep here
  return { retry: true, sleepMs: wait429 !== null ? 0 : wait };
}

/**
 * One try under the gate's lease. A transient 429 pauses the model (and announces it) before the
 * lease is released, so the waiters behind a probe see the pause next. Returns the 429's wait.
 */
async function tryUnderLease(lease: GateLease, req: TransportRequest, deps: TransportDeps, tryNo: number, rateLimited: number) {
  let wait429: number | null = null;
  /** a 429's own end: this call's next try goes no sooner */
  let retryAt: number | null = null;
  try {
    // a probe accepted (2xx headers) lets the waiters go at once, not after its body or stream;
    // a 429's wait counts from its headers, when the server said it, not from when its body was read
    let headersAt: number | null = null;
    // write-ahead: the try is on record before its request leaves (a rejection releases the lease, sends nothing)
    await deps.onSend(tryNo, deps.clock.now());
    const sentAt = deps.clock.now();
    const tryDeps: TransportDeps = {
      ...deps,
      onHeaders: (status, generationId) => {
        headersAt = deps.clock.now();
        if (generationId) deps.onGeneration?.(tryNo, generationId);
        if (lease.probe && status >= 200 && status < 300) lease.accepted();
      },
    };
    const outcome: TryOutcome = await oneTry(req, tryDeps, tryNo);
    // a 429, or a rate-limit error event inside a 200 stream: the model is paused alike
    if (outcome.kind === 'failure' && outcome.error === 'rate_limited' && outcome.transient) {
      wait429 = outcome.waitMs ?? backoffMs(rateLimited, req.provider.onRateLimit, deps.clock.random);
      // the others wait until the wait is over, but never longer than max_wait (a far-future retry-after)
      const { pausedUntil, origin } = pauseFor429({
        now: outcome.status === 429 && headersAt !== null ? headersAt : deps.clock.now(),
        askedMs: wait429,
        maxWaitMs: req.provider.onRateLimit.maxWaitMs,
        serverWait: outcome.waitMs !== null ? (outcome.waitSent ?? null) : null,
      });
      const reason = outcome.status === 429 ? `HTTP 429 from ${req.model}` : `a rate-limit error event in the stream from ${req.model}`;
      retryAt = pausedUntil;
      if (deps.gate.pause(req.model, pausedUntil, reason, origin, sentAt)) {
        deps.sharedPauses?.set(req.model, pausedUntil, reason, origin);
        await deps.onPause({ type: 'rate_limit_pause', model: req.model, pausedUntil, reason, origin });
      }
    }
    return { outcome, wait429, retryAt };
  } finally {
    lease.release({ rateLimited: wait429 !== null });
  }
}

/** Why the gate did not let a try out: which wait, and which limit it would have passed. */
function gateRefusal(a: Extract<Acquired, { ok: false }>, model: string, provider: ResolvedProvider, now: number, deadline: number): string {
  const budget = `transport.budget (${fmtDuration(provider.transport.budgetMs)})`;
  switch (a.waitingFor) {
    case 'pause': {
      const limit =
        a.limit === 'max_wait' ? `on_rate_limit.max_wait (${fmtDuration(provider.onRateLimit.maxWaitMs)})` : `the ${fmtDuration(Math.max(0, deadline - now))} left of ${budget}`;
      return `${model} is paused by a rate limit for ${fmtDuration((a.pausedUntil ?? now) - now)} more, longer than ${limit}: not sent`;
    }
    case 'probe':
      return `${model} waited ${fmtDuration(a.waitedMs)} at the rate-limit gate for the probe call after a pause, and ${budget} ran out: not sent`;
    case 'slot':
      return `${model} waited ${fmtDuration(a.waitedMs)} for a free slot (max_concurrency: ${provider.maxConcurrency}), and ${budget} ran out: not sent`;
  }
}

/** A wait at the gate past a limit: recorded as a try that was never sent, and why. */
function refusedTry(acquired: Extract<Acquired, { ok: false }>, tryNo: number, waitedMs: number, now: number, req: TransportRequest, deadline: number) {
  const { provider, model } = req;
  const t: TryRecord = {
    tryNo,
    status: null,
    error: acquired.waitingFor === 'slot' ? 'timeout' : 'rate_limited',
    retryAfterMs: acquired.pausedUntil === null ? null : acquired.pausedUntil - now,
    waitedMs,
    startedAt: now,
    finishedAt: now,
  };
  // only a first try that was never sent says which setting held it back
  const notSent: NotSent | null =
    tryNo > 1
      ? null
      : acquired.waitingFor === 'pause' && acquired.limit === 'max_wait'
        ? { waitingFor: 'pause', setting: 'on_rate_limit.max_wait', now: fmtDuration(provider.onRateLimit.maxWaitMs) }
        : { waitingFor: acquired.waitingFor, setting: 'transport.budget', now: fmtDuration(provider.transport.budgetMs) };
  return { t, notSent, message: gateRefusal(acquired, model, provider, now, deadline) };
}

function tryRecord(tryNo: number, outcome: TryOutcome, waitedMs: number, startedAt: number, clock: Clock, scrub: (t: string) => string): TryRecord {
  const t: TryRecord = {
    tryNo,
    status: outcome.status,
    error: outcome.kind === 'reply' ? null : outcome.error,
    retryAfterMs: outcome.kind === 'failure' ? outcome.waitMs : null,
    waitedMs,
    startedAt,
    finishedAt: clock.now(),
  };
  if (outcome.kind === 'failure' && outcome.partial) t.discardedText = scrub(outcome.partial);
  if (outcome.kind === 'failure' && outcome.generationId) t.generationId = outcome.generationId;
  return t;
}

/** Runs the tries of one attempt until a reply, a failure that is not retried, or a limit. */
export async function runTransport(req: TransportRequest, deps: TransportDeps): Promise<TransportResult> {
  const { provider, model } = req;
  const { clock } = deps;
  const tries: TryRecord[] = [];
  const usage: ReportedUsage[] = [];
  let usageUnknown = false;
  const deadline = clock.now() + provider.transport.budgetMs;
  const counts: FailureCounts = { rateLimited: 0, other: 0 };
  let sleepMs = 0;
  /** after a 429: this call's own retry time, waited out at the gate with the model's pause */
  let notBefore: number | undefined;
  let last: TryFailure | null = null;

  const record = async (t: TryRecord) => {
    tries.push(t);
    await deps.onTry(t);
  };
  const giveUp = (kind: GiveUpKind, message: string, notSent: NotSent | null = null, waitTooLong = false): TransportResult => ({
    ok: false,
    kind,
    message,
    detail: last?.detail ?? null,
    status: last?.status ?? null,
    tries,
    usage,
    usageUnknown,
    streamedText: req.stream ? (last?.partial ?? null) : null,
    notSent,
    waitTooLong: waitTooLong ? { setting: 'on_rate_limit.max_wait', now: fmtDuration(provider.onRateLimit.maxWaitMs) } : null,
  });

  try {
    for (let tryNo = 1; ; tryNo++) {
      // wait: the previous failure's backoff, then the model's rate-limit gate
      const waitStart = clock.now();
      if (sleepMs > 0) await clock.sleep(sleepMs, deps.signal);
      const acquired = await deps.gate.acquire(model, {
        clock,
        maxConcurrency: provider.maxConcurrency,
        maxWaitMs: provider.onRateLimit.maxWaitMs,
        deadline,
        notBefore,
        signal: deps.signal,
        shared: deps.sharedPauses,
      });
      if (!acquired.ok) {
        const now = clock.now();
        const refused = refusedTry(acquired, tryNo, now - waitStart, now, req, deadline);
        await record(refused.t);
        return giveUp('transport', refused.message, refused.notSent);
      }

      // the try itself
      const waitedMs = clock.now() - waitStart;
      const startedAt = clock.now();
      const { outcome, wait429, retryAt } = await tryUnderLease(acquired.lease, req, deps, tryNo, counts.rateLimited);
      notBefore = retryAt ?? undefined;
      await record(tryRecord(tryNo, outcome, waitedMs, startedAt, clock, deps.scrub));
      if (outcome.kind === 'reply') {
        usage.push(outcome.response.usage);
        // a whole reply that reports no usage (a compatible server ignoring include_usage) was billed all the same
        if (!usageSeen(outcome.response.usage)) usageUnknown = true;
        return { ok: true, status: outcome.status, response: outcome.response, tries, usage, usageUnknown, streamedText: req.stream ? outcome.streamedText : null };
      }
      if (outcome.usage) usage.push(outcome.usage);
      if (outcome.usageUnknown) usageUnknown = true;
      last = outcome;

      // again, or not
      if (wait429 !== null) counts.rateLimited++;
      else if (outcome.transient) counts.other++;
      const backoff = () => transportBackoffMs(counts.other - 1, provider.transport.backoff ?? TRANSPORT_BACKOFF_DEFAULT, clock.random);
      const next = afterFailure(outcome, { tryNo, wait429, counts, backoff, leftMs: deadline - clock.now(), provider });
      if (!next.retry) return giveUp(next.kind, next.message, null, next.waitTooLong);
      sleepMs = next.sleepMs;
    }
  } catch (err) {
    if (!deps.signal?.aborted) throw err;
    // aborted: what the provider reported so far goes to the caller, who records the attempt interrupted
    const inFlight = err instanceof TryAborted;
    const cut = inFlight ? err.usage : null;
    throw new TransportAborted(deps.signal.reason, cut ? [...usage, cut] : usage, usageUnknown || (inFlight && !cut));
  }
}
