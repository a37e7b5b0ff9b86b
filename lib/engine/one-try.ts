// One HTTP try of an attempt (DESIGN: Transport retry and rate limits): send the wire request
// under a watchdog, read the reply — an error status, an SSE stream or a plain body — and say how
// the try ended. Whether to try again is the transport's call (transport.ts).
import { tryJson, type AdapterResult, type ProviderAdapter, type ReportedUsage, type StreamAccumulator, type WireRequest } from './adapter';
import { fmtDuration } from './duration-text';
import { serverWait } from './retry-after';
import { classifyStatus } from './retry-rules';
import { readSse, StreamReadError } from './sse';
import type { Clock, ResolvedProvider, TryError } from './types';

export interface TryRequest {
  provider: ResolvedProvider;
  adapter: ProviderAdapter;
  wire: WireRequest;
  stream: boolean;
}

export interface TryDeps {
  fetch: typeof fetch;
  clock: Clock;
  signal?: AbortSignal;
  /** always-on redaction of captured failure text (DESIGN: Redaction) */
  scrub: (text: string) => string;
  /** text as it streams in (stream requests only) */
  onDelta?: (tryNo: number, text: string) => Promise<void>;
}

/** How one try ended: the provider's reply (whatever its outcome), or a failure of the exchange. */
export type TryOutcome = TryReply | TryFailure;

export interface TryReply {
  kind: 'reply';
  status: number;
  response: AdapterResult;
  /** the text delivered as deltas ('' when nothing streamed) */
  streamedText: string;
}

export interface TryFailure {
  kind: 'failure';
  status: number | null;
  error: TryError;
  transient: boolean;
  /** the wait the server asked for, if any */
  waitMs: number | null;
  message: string;
  /** the error body or the text streamed before the break, redacted */
  detail: string | null;
  /** text streamed before the connection broke, raw */
  partial: string | null;
  usage: ReportedUsage | null;
}

class TryTimeout extends Error {
  constructor(ms: number) {
    super(`no response within transport.timeout (${fmtDuration(ms)})`);
    this.name = 'TryTimeout';
  }
}

/**
 * The per-try timeout: `timeoutMs` until the response headers, then, for streams, as the longest
 * silence between chunks, and for bodies, until the body is read. It watches real I/O, so it runs
 * on real timers; the injected clock times everything else. The caller's signal aborts it too.
 */
function startWatchdog(timeoutMs: number, outer: AbortSignal | undefined) {
  const ac = new AbortController();
  const timeout = new TryTimeout(timeoutMs);
  const timer = setTimeout(() => ac.abort(timeout), timeoutMs);
  const onOuterAbort = () => ac.abort(outer!.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: ac.signal,
    timeout,
    timedOut: () => ac.signal.reason === timeout,
    refresh: () => void timer.refresh(),
    stop() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}
type Watchdog = ReturnType<typeof startWatchdog>;

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

/** A connection that failed, broke mid-stream or timed out; what had streamed so far is kept. */
function brokenConnection(err: unknown, status: number | null, watchdog: Watchdog, acc: StreamAccumulator | null, deps: TryDeps): TryFailure {
  // the caller's own abort is not a failure of the try
  if (deps.signal?.aborted) throw deps.signal.reason;
  const timedOut = watchdog.timedOut();
  const partial = acc ? acc.text() : null;
  return {
    kind: 'failure',
    status,
    error: timedOut ? 'timeout' : 'connection',
    transient: !isBadUrl(err),
    waitMs: null,
    message: timedOut ? watchdog.timeout.message : `connection failed: ${networkMessage(err)}`,
    detail: partial ? deps.scrub(partial) : null,
    partial: partial || null,
    usage: acc ? acc.usage() : null,
  };
}

/** A non-2xx reply: the adapter reads the body, the status table decides whether it is transient. */
async function errorStatus(res: Response, adapter: ProviderAdapter, deps: TryDeps): Promise<TryFailure> {
  let raw = '';
  try {
    raw = await res.text();
  } catch {
    // the status is what matters; a body cut short does not change it
  }
  const body = tryJson(raw);
  const info = adapter.readError(res.status, body ?? raw, raw);
  const verdict = classifyStatus(res.status, res.headers.get('x-should-retry'), info.quota);
  const wait = serverWait(res.headers, body, deps.clock.now());
  return {
    kind: 'failure',
    status: res.status,
    error: verdict.error,
    transient: verdict.transient,
    waitMs: wait?.ms ?? null,
    message: `HTTP ${res.status}: ${deps.scrub(info.message)}${verdict.transient ? '' : ` (${verdict.whyNot})`}`,
    detail: raw ? deps.scrub(raw) : null,
    partial: null,
    usage: null,
  };
}

export async function oneTry(req: TryRequest, deps: TryDeps, tryNo: number): Promise<TryOutcome> {
  const { adapter, wire } = req;
  const watchdog = startWatchdog(req.provider.transport.timeoutMs, deps.signal);
  let acc: StreamAccumulator | null = null;
  try {
    let res: Response;
    try {
      res = await deps.fetch(wire.url, { method: 'POST', headers: wire.headers, body: wire.body, signal: watchdog.signal });
    } catch (err) {
      return brokenConnection(err, null, watchdog, acc, deps);
    }
    watchdog.refresh(); // the headers are in

    if (res.status < 200 || res.status >= 300) return await errorStatus(res, adapter, deps);

    // a stream: every event through the adapter's accumulator, every delta out as it arrives
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
          { onChunk: watchdog.refresh },
        );
      } catch (err) {
        if (err instanceof StreamReadError) return brokenConnection(err, res.status, watchdog, acc, deps);
        throw err;
      }
      return { kind: 'reply', status: res.status, response: a.finish(), streamedText: a.text() };
    }

    // a whole body
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return brokenConnection(err, res.status, watchdog, acc, deps);
    }
    const response = adapter.parseBody(text);
    if (req.stream && response.text) {
      // a server that ignored `stream`: its whole text is the one delta
      await deps.onDelta?.(tryNo, response.text);
      return { kind: 'reply', status: res.status, response, streamedText: response.text };
    }
    return { kind: 'reply', status: res.status, response, streamedText: '' };
  } finally {
    watchdog.stop();
  }
}
