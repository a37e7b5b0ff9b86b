// Transport (DESIGN.md §6): the HTTP tries of one attempt. Transient failures are re-tried here,
// honouring the server's wait as a minimum; a plain client error is never re-tried; a 429 pauses
// the model at the rate-limit gate. What comes back is either the provider's reply, normalised by
// the adapter, or a failure that ends the attempt as outcome `error` (kind transport/client_error).
import type { AdapterResult, ProviderAdapter, ReportedUsage, WireRequest } from '@/lib/providers/adapter';
import { NO_USAGE, tryJson } from '@/lib/providers/adapter';
import { readSse, StreamReadError } from '@/lib/providers/sse';
import { backoffMs } from './backoff';
import type { RateGate } from './rate-gate';
import { serverWait } from './retry-after';
import type { Clock, EngineEvent, ResolvedProvider, SharedPauses, TryError, TryRecord } from './types';

const TRANSIENT_STATUS = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

export interface StatusVerdict {
  transient: boolean;
  error: TryError;
}

/** Which HTTP statuses are worth another try (DESIGN §6). `x-should-retry` overrides the table;
 * a quota 429 is not transient (waiting will not clear it). */
export function classifyStatus(status: number, shouldRetry: string | null, quota: boolean): StatusVerdict {
  const error: TryError =
    status === 429 ? 'rate_limited' : status === 408 ? 'timeout' : status >= 500 || status === 409 ? 'server_error' : 'client_error';
  const header = shouldRetry?.trim().toLowerCase();
  if (header === 'true') return { transient: true, error };
  if (header === 'false') return { transient: false, error };
  return { transient: TRANSIENT_STATUS.has(status) && !quota, error };
}

export interface TransportDeps {
  fetch: typeof fetch;
  clock: Clock;
  gate: RateGate;
  sharedPauses?: SharedPauses;
  signal?: AbortSignal;
  /** always-on redaction of captured failure text (DESIGN §9) */
  scrub: (text: string) => string;
  onTry: (t: TryRecord) => Promise<void>;
  /** text as it streams in (stream requests only) */
  onDelta?: (tryNo: number, text: string) => Promise<void>;
  onPause: (e: Extract<EngineEvent, { type: 'rate_limit_pause' }>) => Promise<void>;
}

export interface TransportRequest {
  /** the model string: the gate's key */
  model: string;
  provider: ResolvedProvider;
  adapter: ProviderAdapter;
  wire: WireRequest;
  stream: boolean;
}

export type TransportResult =
  | { ok: true; status: number; response: AdapterResult; tries: TryRecord[]; usage: ReportedUsage[]; streamedText: string | null }
  | {
      ok: false;
      kind: 'transport' | 'client_error';
      message: string;
      /** the last error body or network error, redacted */
      detail: string | null;
      status: number | null;
      tries: TryRecord[];
      usage: ReportedUsage[];
      /** a stream's last broken try, raw (the caller stores it redacted, as discarded) */
      streamedText: string | null;
    };

/** How one try ended. */
type TryOutcome = { kind: 'reply'; status: number; response: AdapterResult } | Failure;
type Failure = {
      kind: 'failure';
      status: number | null;
      error: TryError;
      transient: boolean;
      waitMs: number | null;
      message: string;
      detail: string | null;
      /** text streamed before the connection broke */
      partial: string | null;
      usage: ReportedUsage | null;
};

class TryTimeout extends Error {
  constructor(ms: number) {
    super(`no response within transport.timeout (${fmt(ms)})`);
    this.name = 'TryTimeout';
  }
}

export function fmt(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** A connection failure's own words: `fetch failed` hides them in `cause`. */
function networkMessage(err: unknown): string {
  const e = err instanceof StreamReadError ? err.cause : err;
  const cause = (e as { cause?: { code?: string; message?: string } } | null)?.cause;
  const base = e instanceof Error ? e.message : String(e);
  if (cause?.code) return `${base} (${cause.code}${cause.message && !cause.message.includes(cause.code) ? `: ${cause.message}` : ''})`;
  if (cause?.message) return `${base} (${cause.message})`;
  return base;
}

/** A URL the runtime cannot even parse is configuration, not a transient failure. */
function isBadUrl(err: unknown): boolean {
  return err instanceof TypeError && /invalid url|failed to parse url/i.test(err.message);
}

/**
 * One HTTP exchange with a watchdog: `timeoutMs` until the response headers, then, for streams,
 * as the longest silence between chunks, and for bodies, until the body is read. The watchdog
 * watches real I/O, so it runs on real timers; the injected clock times everything else.
 */
async function oneTry(req: TransportRequest, deps: TransportDeps, tryNo: number, streamed: { text: string }): Promise<TryOutcome> {
  const { provider, adapter, wire } = req;
  const timeoutMs = provider.transport.timeoutMs;
  const ac = new AbortController();
  const timeout = new TryTimeout(timeoutMs);
  const timer = setTimeout(() => ac.abort(timeout), timeoutMs);
  const onOuterAbort = () => ac.abort(deps.signal!.reason);
  deps.signal?.addEventListener('abort', onOuterAbort, { once: true });
  let acc: ReturnType<ProviderAdapter['createStream']> | null = null;

  const fail = (err: unknown, status: number | null): TryOutcome => {
    if (deps.signal?.aborted) throw deps.signal.reason;
    const timedOut = ac.signal.reason === timeout;
    const partial = acc ? acc.text() : null;
    return {
      kind: 'failure',
      status,
      error: timedOut ? 'timeout' : 'connection',
      transient: !isBadUrl(err),
      waitMs: null,
      message: timedOut ? timeout.message : `connection failed: ${networkMessage(err)}`,
      detail: partial ? deps.scrub(partial) : null,
      partial: partial || null,
      usage: acc ? acc.usage() : null,
    };
  };

  try {
    let res: Response;
    try {
      res = await deps.fetch(wire.url, { method: 'POST', headers: wire.headers, body: wire.body, signal: ac.signal });
    } catch (err) {
      return fail(err, null);
    }
    timer.refresh();

    if (res.status < 200 || res.status >= 300) {
      let raw = '';
      try {
        raw = await res.text();
      } catch {
        // the status is what matters; a body cut short does not change it
      }
      const body = tryJson(raw);
      const info = adapter.readError(res.status, body ?? raw, raw);
      const shouldRetry = res.headers.get('x-should-retry');
      const verdict = classifyStatus(res.status, shouldRetry, info.quota);
      const wait = serverWait(res.headers, body, deps.clock.now());
      const why = verdict.transient
        ? ''
        : shouldRetry?.trim().toLowerCase() === 'false'
          ? ' (x-should-retry: false: the server said not to retry)'
          : info.quota
            ? ' (a quota or spend limit: waiting will not clear it, not retried)'
            : res.status >= 400 && res.status < 500
              ? ' (a client error: not retried)'
              : ` (HTTP ${res.status} is not a transient failure: not retried)`;
      return {
        kind: 'failure',
        status: res.status,
        error: verdict.error,
        transient: verdict.transient,
        waitMs: wait?.ms ?? null,
        message: `HTTP ${res.status}: ${deps.scrub(info.message)}${why}`,
        detail: raw ? deps.scrub(raw) : null,
        partial: null,
        usage: null,
      };
    }

    const isSse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    if (req.stream && isSse && res.body) {
      const a = adapter.createStream();
      acc = a;
      try {
        await readSse(
          res.body,
          async (ev) => {
            const { delta, done } = a.push(ev);
            if (delta) await deps.onDelta?.(tryNo, delta);
            return done;
          },
          { onChunk: () => timer.refresh() },
        );
      } catch (err) {
        if (err instanceof StreamReadError) return fail(err, res.status);
        throw err;
      }
      streamed.text = a.text();
      return { kind: 'reply', status: res.status, response: a.finish() };
    }

    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return fail(err, res.status);
    }
    const response = adapter.parseBody(text);
    if (req.stream && response.text) {
      // a server that ignored `stream`: its whole text is the one delta
      streamed.text = response.text;
      await deps.onDelta?.(tryNo, response.text);
    }
    return { kind: 'reply', status: res.status, response };
  } finally {
    clearTimeout(timer);
    deps.signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** Runs the tries of one attempt until a reply, a non-transient failure or a limit. */
export async function runTransport(req: TransportRequest, deps: TransportDeps): Promise<TransportResult> {
  const { provider, model } = req;
  const { clock } = deps;
  const tries: TryRecord[] = [];
  const usage: ReportedUsage[] = [];
  const deadline = clock.now() + provider.transport.budgetMs;
  let rateLimited = 0;
  let otherFailures = 0;
  let sleepMs = 0;
  let last: Failure | null = null;

  const giveUp = (kind: 'transport' | 'client_error', message: string): TransportResult => ({
    ok: false,
    kind,
    message,
    detail: last?.detail ?? null,
    status: last?.status ?? null,
    tries,
    usage,
    streamedText: req.stream ? (last?.partial ?? null) : null,
  });

  for (let tryNo = 1; ; tryNo++) {
    const waitStart = clock.now();
    if (sleepMs > 0) await clock.sleep(sleepMs, deps.signal);
    sleepMs = 0;
    const acquired = await deps.gate.acquire(model, {
      clock,
      maxConcurrency: provider.maxConcurrency,
      maxWaitMs: provider.onRateLimit.maxWaitMs,
      deadline,
      signal: deps.signal,
      shared: deps.sharedPauses,
    });
    if (!acquired.ok) {
      const left = acquired.pausedUntil - clock.now();
      const limit =
        acquired.limit === 'max_wait'
          ? `on_rate_limit.max_wait (${fmt(provider.onRateLimit.maxWaitMs)})`
          : `the ${fmt(Math.max(0, deadline - clock.now()))} left of transport.budget (${fmt(provider.transport.budgetMs)})`;
      const t: TryRecord = {
        tryNo,
        status: null,
        error: 'rate_limited',
        retryAfterMs: left,
        waitedMs: clock.now() - waitStart,
        startedAt: clock.now(),
        finishedAt: clock.now(),
      };
      tries.push(t);
      await deps.onTry(t);
      return giveUp('transport', `${model} is paused by a rate limit for ${fmt(left)} more, longer than ${limit}: not sent`);
    }

    const lease = acquired.lease;
    const waitedMs = clock.now() - waitStart;
    const startedAt = clock.now();
    const streamed = { text: '' };
    let outcome: TryOutcome;
    let got429 = false;
    let wait429 = 0;
    try {
      outcome = await oneTry(req, deps, tryNo, streamed);
      got429 = outcome.kind === 'failure' && outcome.status === 429 && outcome.transient;
      if (got429) {
        // pause the model before anyone else gets through (a probe's waiters look at it next)
        wait429 = (outcome as Failure).waitMs ?? backoffMs(rateLimited, provider.onRateLimit, clock.random);
        const until = clock.now() + wait429;
        const reason = `HTTP 429 from ${model}`;
        if (deps.gate.pause(model, until, reason)) {
          deps.sharedPauses?.set(model, until, reason);
          await deps.onPause({ type: 'rate_limit_pause', model, pausedUntil: until, reason });
        }
      }
    } finally {
      lease.release({ rateLimited: got429 });
    }

    const t: TryRecord = {
      tryNo,
      status: outcome.status,
      error: outcome.kind === 'reply' ? null : outcome.error,
      retryAfterMs: outcome.kind === 'failure' ? outcome.waitMs : null,
      waitedMs,
      startedAt,
      finishedAt: clock.now(),
    };
    if (outcome.kind === 'failure' && outcome.partial) t.discardedText = deps.scrub(outcome.partial);
    tries.push(t);
    await deps.onTry(t);
    if (outcome.kind === 'reply') {
      usage.push(outcome.response.usage);
      return { ok: true, status: outcome.status, response: outcome.response, tries, usage, streamedText: req.stream ? streamed.text : null };
    }
    if (outcome.usage) usage.push(outcome.usage);
    last = outcome;

    if (!outcome.transient) return giveUp('client_error', outcome.message);

    // how many tries this kind of failure allows, first try included
    if (got429) rateLimited++;
    else otherFailures++;
    if (got429 && rateLimited >= provider.onRateLimit.maxAttempts) {
      return giveUp('transport', `${outcome.message}; gave up after ${tryNo} tries (on_rate_limit.max_attempts: ${provider.onRateLimit.maxAttempts})`);
    }
    if (!got429 && otherFailures >= provider.transport.maxAttempts) {
      return giveUp('transport', `${outcome.message}; gave up after ${tryNo} tries (transport.max_attempts: ${provider.transport.maxAttempts})`);
    }

    // the server's wait is a minimum; without one, exponential backoff from default_wait
    const wait = got429 ? wait429 : (outcome.waitMs ?? backoffMs(otherFailures - 1, provider.onRateLimit, clock.random));
    if (outcome.waitMs !== null && wait > provider.onRateLimit.maxWaitMs) {
      return giveUp(
        'transport',
        `${outcome.message}; the server asked to wait ${fmt(wait)}, longer than on_rate_limit.max_wait (${fmt(provider.onRateLimit.maxWaitMs)}): not retried`,
      );
    }
    const left = deadline - clock.now();
    if (wait > left) {
      return giveUp(
        'transport',
        `${outcome.message}; the next try would wait ${fmt(wait)}, longer than the ${fmt(Math.max(0, left))} left of transport.budget (${fmt(provider.transport.budgetMs)}): not retried`,
      );
    }
    // a 429's wait is served at the gate (the pause); other waits here
    if (!got429) sleepMs = wait;
  }
}
