// One HTTP try of an attempt (DESIGN: Transport retry and rate limits): send the wire request
// under a watchdog, read the reply — an error status, an SSE stream or a plain body — and say how
// the try ended. Whether to try again is the transport's call (transport.ts).
import { linkAbort } from './abort-link';
import { tryJson, type AdapterResult, type ProviderAdapter, type ReportedUsage, type StreamAccumulator, type StreamBreak, type WireRequest } from './adapter';
import { realTimer, type RealTimer } from './clock';
import { fmtDuration } from './duration-text';
import { serverWait } from './retry-after';
import { classifyStatus } from './retry-rules';
import { stripUrlCredentials, type ScrubOptions } from './secrets';
import { postWire, type WireReply } from './http-client';
import { describeHosts, providerHosts, refusedHost, type ProviderHosts } from './provider-hosts';
import { cancelBody, readBodyText, readSse, ResponseTooLarge, StreamReadError } from './sse';
import type { Clock, ResolvedProvider, TryError } from './types';

export interface TryRequest {
  provider: ResolvedProvider;
  adapter: ProviderAdapter;
  wire: WireRequest;
  stream: boolean;
}

export interface TryDeps {
  /** undefined: the engine's own HTTP client (http-client.ts); a fetch given here is used instead */
  fetch?: typeof fetch;
  clock: Clock;
  signal?: AbortSignal;
  /** always-on redaction of captured failure text, the API key included (DESIGN: Redaction);
   * `opts.max` cuts after scrubbing, and a key prefix left at a cut is scrubbed too */
  scrub: (text: string, opts?: ScrubOptions) => string;
  /** text as it streams in (stream requests only) */
  onDelta?: (tryNo: number, text: string) => Promise<void>;
  /** the reply's status is in (before its body): a probe's 2xx lets the gate's waiters go */
  /** the reply's headers are in: its status, and the generation id a router named (OpenRouter's x-generation-id), null when none */
  onHeaders?: (status: number, generationId: string | null) => void;
  /** the hosts a request may go to; undefined: AQVEN_PROVIDER_HOSTS of the process, read at each try */
  providerHosts?: ProviderHosts | null;
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
  /** that wait as the server sent it, e.g. `retry-after: 120` (the record of a rate-limit pause) */
  waitSent?: string | null;
  message: string;
  /** the error body or the text streamed before the break, redacted */
  detail: string | null;
  /** text streamed before the connection broke, raw */
  partial: string | null;
  usage: ReportedUsage | null;
  /** a 2xx reply that was not read to its end: the provider may have billed tokens we never saw */
  usageUnknown?: boolean;
  /** the provider said the quota or spend limit is spent (`ProviderErrorInfo.quota`, a `quota` break): not transient, ends the attempt with cause `quota` */
  quota?: boolean;
  /** the provider declined to answer with an HTTP error (`ProviderErrorInfo.refusal`): not transient, ends the attempt as outcome `refusal` */
  refusal?: boolean;
  /** such a reply's `x-generation-id` (OpenRouter): its usage can be looked up later (DESIGN: Usage unknown, never zero) */
  generationId?: string;
}

/** Bytes of a non-2xx body read at most: the status decides, the body only explains it. */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** Characters of an error message kept: a provider's own message, and an excerpt of any other body. */
export const ERROR_MESSAGE_MAX_CHARS = 1000;
export const ERROR_EXCERPT_MAX_CHARS = 200;

/**
 * The caller aborted the try (its run was stopped: DESIGN: Storage, "Stopping a run"). Not a
 * failure of the try: it carries the caller's `reason`, and the usage the stream had reported when
 * it was cut (null: none — a body, a try cut before its headers, or a stream before its usage).
 */
export class TryAborted extends Error {
  constructor(
    readonly reason: unknown,
    readonly usage: ReportedUsage | null,
  ) {
    super(reason instanceof Error ? reason.message : 'aborted');
    this.name = 'TryAborted';
  }
}

/** Whether a usage the accumulator reports holds anything the provider sent (its zero start does not). */
export function usageSeen(u: ReportedUsage | null): u is ReportedUsage {
  return u !== null && (u.inputTokens > 0 || u.outputTokens > 0 || u.costUsd !== null);
}

class TryTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TryTimeout';
  }
}

/**
 * The try's timers. They watch real I/O, so they run on real timers (any length: clock.ts); the
 * injected clock times everything else. The caller's signal aborts the try too.
 * - `transport.timeout`: until the response headers, then, for streams, the longest silence
 *   between chunks (any bytes), and for bodies, until the body is read;
 * - `transport.idle_timeout` (streams, from the headers on): the longest time without content —
 *   SSE comments, pings and empty chunks do not reset it, so keep-alives cannot hold a try forever;
 * - `transport.try_deadline`: the whole try, whatever arrives.
 */
function startWatchdog(t: ResolvedProvider['transport'], outer: AbortSignal | undefined) {
  // linked by hand, not AbortSignal.any: the caller's signal outlives many tries (abort-link.ts)
  const { ac, unlink } = linkAbort(outer);
  const fire = (message: string) => () => ac.abort(new TryTimeout(message));
  const silence = realTimer(t.timeoutMs, fire(`no response within transport.timeout (${fmtDuration(t.timeoutMs)})`), 'transport.timeout');
  const deadline = realTimer(t.tryDeadlineMs, fire(`the try took longer than transport.try_deadline (${fmtDuration(t.tryDeadlineMs)}): cut off`), 'transport.try_deadline');
  let idle: RealTimer | null = null;
  return {
    signal: ac.signal,
    timedOut: () => ac.signal.reason instanceof TryTimeout,
    message: () => (ac.signal.reason instanceof TryTimeout ? ac.signal.reason.message : 'timed out'),
    /** the headers are in, or a chunk of a stream arrived */
    refresh: () => silence.refresh(),
    /** a stream began: from now on, only content resets the idle timer */
    startIdle() {
      idle ??= realTimer(
        t.idleTimeoutMs,
        fire(`no content for transport.idle_timeout (${fmtDuration(t.idleTimeoutMs)}): the stream sent only keep-alives or nothing`),
        'transport.idle_timeout',
      );
    },
    /** content arrived */
    progress: () => idle?.refresh(),
    stop() {
      silence.clear();
      deadline.clear();
      idle?.clear();
      unlink();
    },
  };
}
type Watchdog = ReturnType<typeof startWatchdog>;

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;

/** A connection failure's own words: `fetch failed` hides them in `cause`. */
function networkMessage(err: unknown): string {
  const e = err instanceof StreamReadError ? err.cause : err;
  const cause = (e as { cause?: { code?: string; message?: string } } | null)?.cause;
  const base = e instanceof Error ? e.message : String(e);
  if (cause?.code) return `${base} (${cause.code}${cause.message && !cause.message.includes(cause.code) ? `: ${cause.message}` : ''})`;
  if (cause?.message) return `${base} (${cause.message})`;
  return base;
}

/** A URL the runtime cannot even parse, or one with credentials in it, is configuration, not a transient failure. */
function isBadUrl(err: unknown): boolean {
  return err instanceof TypeError && /invalid url|failed to parse url|includes credentials/i.test(err.message);
}

function aborted(acc: StreamAccumulator | null, signal: AbortSignal): TryAborted {
  const usage = acc ? acc.usage() : null;
  return new TryAborted(signal.reason, usageSeen(usage) ? usage : null);
}

/** A connection that failed, broke mid-stream or timed out; what had streamed so far is kept. */
function brokenConnection(err: unknown, status: number | null, watchdog: Watchdog, acc: StreamAccumulator | null, deps: TryDeps): TryFailure {
  // the caller's own abort is not a failure of the try: it hands over what the stream reported
  if (deps.signal?.aborted) throw aborted(acc, deps.signal);
  const timedOut = watchdog.timedOut();
  const partial = acc ? acc.text() : null;
  const badUrl = isBadUrl(err);
  // the runtime's words may quote the URL, `user:secret@` and all: scrubbed like any body
  const words = deps.scrub(stripUrlCredentials(networkMessage(err)), { max: ERROR_MESSAGE_MAX_CHARS, secretsOnly: true });
  const failure: TryFailure = {
    kind: 'failure',
    status,
    error: timedOut ? 'timeout' : 'connection',
    transient: !badUrl,
    waitMs: null,
    message: timedOut ? watchdog.message() : badUrl ? `the request could not be sent: ${words}` : `connection failed: ${words}`,
    detail: partial ? deps.scrub(partial) : null,
    partial: partial || null,
    usage: acc ? acc.usage() : null,
  };
  if (is2xx(status)) failure.usageUnknown = true;
  return failure;
}

/**
 * A 200 stream that did not complete (DESIGN: Transport retry and rate limits): it ended without a
 * finish reason, or an error event reported a rate limit, an overload or a server error. Transient,
 * like a connection that broke; a rate-limit event pauses the model (transport.ts). The provider may
 * have billed what streamed, so its usage is unknown. A quota event is not transient (`quota`).
 */
function streamBroken(b: StreamBreak, status: number, acc: StreamAccumulator, deps: TryDeps): TryFailure {
  const partial = acc.text();
  const raw = [partial, b.detail].filter(Boolean).join('\n\n');
  return {
    kind: 'failure',
    status,
    ...breakKind(b),
    waitMs: null,
    message: deps.scrub(b.message, { max: ERROR_MESSAGE_MAX_CHARS }),
    detail: raw ? deps.scrub(raw) : null,
    partial: partial || null,
    usage: acc.usage(),
    usageUnknown: true,
  };
}

/** How a break is stored on the try: a spent quota is a rate limit that is never tried again and pauses nothing. */
function breakKind(b: StreamBreak): Pick<TryFailure, 'error' | 'transient' | 'quota'> {
  return b.error === 'quota' ? { error: 'rate_limited', transient: false, quota: true } : { error: b.error, transient: true };
}

/**
 * A 2xx body that is no answer (DESIGN: Transport retry and rate limits): its error object reports
 * a rate limit, an overload or a server error — OpenRouter's upstream failure "during generation"
 * sent as HTTP 200 — read like the same event in a stream, with the wait the reply asked for; or a
 * spent quota, never tried again. The body was read whole: its usage is what it reported.
 */
function bodyBroken(b: StreamBreak, res: WireReply, response: AdapterResult, text: string, deps: TryDeps): TryFailure {
  const wait = serverWait(res.headers, tryJson(text), deps.clock.now());
  return {
    kind: 'failure',
    status: res.status,
    ...breakKind(b),
    waitMs: wait?.ms ?? null,
    waitSent: wait ? `${wait.source === 'retry-info' ? 'RetryInfo.retryDelay' : wait.source}: ${wait.sent}` : null,
    message: deps.scrub(b.message, { max: ERROR_MESSAGE_MAX_CHARS }),
    detail: b.detail ? deps.scrub(b.detail) : null,
    partial: null,
    usage: response.usage,
  };
}

/** A 2xx body past transport.max_response_bytes: reading stopped there; sending again would not help. */
function tooLarge(status: number, max: number, acc: StreamAccumulator | null, deps: TryDeps): TryFailure {
  const partial = acc ? acc.text() : null;
  return {
    kind: 'failure',
    status,
    error: 'client_error',
    transient: false,
    waitMs: null,
    message: `the response is larger than transport.max_response_bytes (${fmtBytes(max)}) after decompression: reading stopped there, not retried; its usage is unknown`,
    detail: partial ? deps.scrub(partial, { cut: true }) : null,
    partial: partial || null,
    usage: acc ? acc.usage() : null,
    usageUnknown: true,
  };
}

export function fmtBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * A 3xx: never followed. `fetch` would strip only Authorization, so x-api-key / x-goog-api-key
 * (and, on a 307/308, the prompt) would reach whatever host the provider names. Not retried.
 */
async function redirected(res: WireReply, url: string): Promise<TryFailure> {
  await cancelBody(res.body);
  const from = originOf(url) ?? 'the provider';
  const location = res.headers.get('location');
  const to = location === null ? null : originOf(location, url);
  const where = to === null ? '' : to === from ? ` (to another path on ${to})` : ` (to ${to})`;
  return {
    kind: 'failure',
    status: res.status,
    error: 'client_error',
    transient: false,
    waitMs: null,
    // origins only: no userinfo, path or query of either URL
    message: `the provider answered HTTP ${res.status} to ${from}${where}; redirects are not followed, so no key or prompt goes elsewhere: set base_url to the final URL`,
    detail: null,
    partial: null,
    usage: null,
  };
}

/** scheme://host[:port] of a URL (never its userinfo, path or query), or null. */
function originOf(url: string, base?: string): string | null {
  try {
    const origin = new URL(url, base).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** A non-2xx reply: the adapter reads the body, the status table decides whether it is transient. */
async function errorStatus(res: WireReply, adapter: ProviderAdapter, deps: TryDeps): Promise<TryFailure> {
  let raw = '';
  let cut = false;
  try {
    ({ text: raw, cut } = await readBodyText(res.body, ERROR_BODY_MAX_BYTES, 'cut'));
  } catch {
    // the status is what matters; a body cut short does not change it
  }
  const body = tryJson(raw);
  const info = adapter.readError(res.status, body ?? raw, raw);
  if (info.refusal) {
    // the provider declining (moderation, a content filter): a refusal, not a client error; never resent here
    const words = info.message ? deps.scrub(info.message, { max: ERROR_MESSAGE_MAX_CHARS, cut }) : '';
    return {
      kind: 'failure',
      status: res.status,
      error: 'client_error',
      transient: false,
      refusal: true,
      waitMs: null,
      message: `HTTP ${res.status}${words ? `: ${words}` : ''}`,
      detail: raw ? deps.scrub(raw, { cut }) : null,
      partial: null,
      usage: null,
    };
  }
  const verdict = classifyStatus(res.status, res.headers.get('x-should-retry'), info.quota);
  // a quota the server did not overrule (x-should-retry: true) ends the attempt with cause quota
  const quota = info.quota && !verdict.transient ? { quota: true } : {};
  // scrubbed whole, then cut: a key straddling the cut must not survive as its prefix
  const said = info.message ? deps.scrub(info.message, { max: info.excerpt ? ERROR_EXCERPT_MAX_CHARS : ERROR_MESSAGE_MAX_CHARS, cut }) : '';
  const wait = serverWait(res.headers, body, deps.clock.now());
  return {
    kind: 'failure',
    status: res.status,
    error: verdict.error,
    transient: verdict.transient,
    waitMs: wait?.ms ?? null,
    waitSent: wait ? `${wait.source === 'retry-info' ? 'RetryInfo.retryDelay' : wait.source}: ${wait.sent}` : null,
    message: `HTTP ${res.status}${said ? `: ${said}` : ''}${verdict.transient ? '' : ` (${verdict.whyNot})`}`,
    detail: raw ? deps.scrub(raw, { cut }) : null,
    partial: null,
    usage: null,
    ...quota,
  };
}

/**
 * The request's host is not on the deployment's AQVEN_PROVIDER_HOSTS: nothing is sent, and sending
 * again cannot help. A value, not a crash: the attempt records it and the policy goes on.
 */
function hostRefused(req: TryRequest, host: string, hosts: ProviderHosts): TryFailure {
  return {
    kind: 'failure',
    status: null,
    error: 'client_error',
    transient: false,
    waitMs: null,
    message: `the host ${host} of provider "${req.provider.name}" (its base_url) is not in ${describeHosts(hosts)}, the only hosts a request may go to; add the host there or point base_url at a listed one`,
    detail: null,
    partial: null,
    usage: null,
  };
}

export async function oneTry(req: TryRequest, deps: TryDeps, tryNo: number): Promise<TryOutcome> {
  // before anything leaves: the key and the prompt go only to the hosts the deployment lists
  const hosts = deps.providerHosts === undefined ? providerHosts() : deps.providerHosts;
  const refused = refusedHost(hosts, req.wire.url);
  if (refused !== null) return hostRefused(req, refused, hosts!);
  const seen: { generationId: string | null } = { generationId: null };
  const out = await exchange(req, deps, tryNo, seen);
  // a reply billed but never read to its end, with no usage reported: the provider's id lets it be looked up
  if (out.kind === 'failure' && out.usageUnknown && seen.generationId && !usageSeen(out.usage)) out.generationId = seen.generationId;
  return out;
}

async function exchange(req: TryRequest, deps: TryDeps, tryNo: number, seen: { generationId: string | null }): Promise<TryOutcome> {
  const { adapter, wire } = req;
  const limits = req.provider.transport;
  const watchdog = startWatchdog(limits, deps.signal);
  let acc: StreamAccumulator | null = null;
  try {
    let res: WireReply;
    try {
      // never follow a redirect: the key headers and the prompt would go wherever it points (the engine's client never does)
      res = deps.fetch
        ? await deps.fetch(wire.url, { method: 'POST', headers: wire.headers, body: wire.body, signal: watchdog.signal, redirect: 'manual' })
        : await postWire(wire.url, { headers: wire.headers, body: wire.body, signal: watchdog.signal });
    } catch (err) {
      return brokenConnection(err, null, watchdog, acc, deps);
    }
    watchdog.refresh(); // the headers are in
    seen.generationId = res.headers.get('x-generation-id');
    deps.onHeaders?.(res.status, seen.generationId);

    if (res.status >= 300 && res.status < 400) return await redirected(res, wire.url);
    if (res.status < 200 || res.status >= 300) return await errorStatus(res, adapter, deps);

    // a stream: every event through the adapter's accumulator, every delta out as it arrives
    const isSse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    if (req.stream && isSse && res.body) {
      const a = adapter.createStream();
      acc = a;
      watchdog.startIdle();
      try {
        await readSse(
          res.body,
          async (ev) => {
            const { delta, done, progress } = a.push(ev);
            if (progress ?? (delta !== '' || done)) watchdog.progress();
            if (delta) await deps.onDelta?.(tryNo, delta);
            return done;
          },
          { onChunk: watchdog.refresh, maxBytes: limits.maxResponseBytes },
        );
      } catch (err) {
        if (err instanceof StreamReadError) return brokenConnection(err, res.status, watchdog, acc, deps);
        if (err instanceof ResponseTooLarge) return tooLarge(res.status, limits.maxResponseBytes, acc, deps);
        if (deps.signal?.aborted) throw aborted(acc, deps.signal);
        throw err;
      }
      // a stream that did not complete (no finish reason, or a rate-limit or overload event) fails
      // the try like a dropped connection; the transport decides whether another one starts
      const broken = a.broken();
      if (broken) return streamBroken(broken, res.status, a, deps);
      return { kind: 'reply', status: res.status, response: a.finish(), streamedText: a.text() };
    }

    // a whole body
    let text: string;
    try {
      ({ text } = await readBodyText(res.body, limits.maxResponseBytes, 'throw'));
    } catch (err) {
      if (err instanceof ResponseTooLarge) return tooLarge(res.status, limits.maxResponseBytes, acc, deps);
      return brokenConnection(err, res.status, watchdog, acc, deps);
    }
    const response = adapter.parseBody(text);
    if (response.broken) return bodyBroken(response.broken, res, response, text, deps);
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
