// Sending one alert to its webhook (docs/monitoring.md, "Alerts"): a JSON POST, tried at most
// WEBHOOK_TRIES times. A connection that failed, or a status the transport would send again (408,
// 409, 429, 500, 502, 503, 504, 529: lib/engine/retry-rules.ts), is tried again after a backoff (1 s
// doubling to 30 s, up to a quarter off at random) or the Retry-After the receiver asked for, when it
// is at most WEBHOOK_WAIT_MAX; any other answer ends it. Time is injected (now, sleep, random). The
// URL is a secret (Slack's carries its token): no error text names it.
import { transportBackoffMs } from '@/lib/engine/backoff';
import { parseRetryAfter } from '@/lib/engine/retry-after';
import { classifyStatus } from '@/lib/engine/retry-rules';
import { scrubSecret, stripUrlCredentials } from '@/lib/engine/secrets';
import type { Clock, TransportBackoff } from '@/lib/engine/types';
import { redact } from '@/lib/redact';

/** tries per alert, the first included */
export const WEBHOOK_TRIES = 4;
/** one try's longest wait for the answer's headers and body */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** the longest Retry-After followed; a longer one ends the delivery */
export const WEBHOOK_WAIT_MAX = 60_000;
/** the wait before try n + 1 when the receiver names none: 1 s doubling, at most 30 s, up to a quarter off */
export const WEBHOOK_BACKOFF: TransportBackoff = { baseMs: 1000, factor: 2, capMs: 30_000, jitter: 0.25 };
/** how much of a refusing answer's body is kept with the error (Slack says why: "invalid_payload", "no_service") */
const BODY_KEPT = 200;

export interface Delivery {
  ok: boolean;
  tries: number;
  /** the last answer's HTTP status; null when none came */
  status: number | null;
  /** why the last failed try failed (redacted, without the URL): also kept when a later try delivered it; null when none failed */
  lastError: string | null;
}

export interface SendOptions {
  clock: Pick<Clock, 'now' | 'sleep' | 'random'>;
  /** told (and awaited) after each failed try that will be tried again: how it failed and the wait before the next */
  onRetry?: (d: Delivery, waitMs: number) => Promise<void> | void;
  fetch?: typeof fetch;
  tries?: number;
}

/** An error text with every part of the URL that may hold a secret taken out, then redacted. */
export function scrubWebhookText(text: string, url: URL): string {
  const secrets = [url.href, `${url.host}${url.pathname}${url.search}`, url.pathname + url.search, url.pathname, url.search.slice(1), decodeURIComponent(url.password)].filter(
    (s) => s.length >= 4 && s !== '/',
  );
  return scrubSecret(redact(stripUrlCredentials(text)), secrets, { max: 400, secretsOnly: true });
}

async function oneTry(url: URL, body: string, fetchImpl: typeof fetch): Promise<{ status: number | null; error: string | null; retryAfter: string | null }> {
  try {
    const res = await fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'aqven-alerts' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    const text = await res.text().catch(() => '');
    if (res.status >= 200 && res.status < 300) return { status: res.status, error: null, retryAfter: null };
    const said = text.trim().slice(0, BODY_KEPT);
    return { status: res.status, error: `HTTP ${res.status}${said ? `: ${said}` : ''}`, retryAfter: res.headers.get('retry-after') };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const cause = e.cause?.code ?? e.cause?.message;
    return { status: null, error: e.name === 'TimeoutError' ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : `${e.message}${cause ? ` (${cause})` : ''}`, retryAfter: null };
  }
}

/** POSTs `body` (JSON) to `url`, tried again as the header says; resolves with how it went, never rejects. */
export async function sendWebhook(url: URL, body: unknown, o: SendOptions): Promise<Delivery> {
  const text = JSON.stringify(body);
  const tries = o.tries ?? WEBHOOK_TRIES;
  const fetchImpl = o.fetch ?? fetch;
  let last: Delivery = { ok: false, tries: 0, status: null, lastError: null };
  for (let n = 1; n <= tries; n++) {
    const r = await oneTry(url, text, fetchImpl);
    if (r.error === null) return { ok: true, tries: n, status: r.status, lastError: last.lastError };
    last = { ok: false, tries: n, status: r.status, lastError: scrubWebhookText(r.error, url) };
    // a connection that failed, or an answer the transport would send again (408, 409, 429, 500, 502, 503, 504, 529)
    const again = r.status === null || classifyStatus(r.status, null, false).transient;
    if (n === tries || !again) return last;
    const asked = parseRetryAfter(r.retryAfter, o.clock.now());
    if (asked !== null && asked > WEBHOOK_WAIT_MAX)
      return { ...last, lastError: `${last.lastError} (asked to wait ${Math.ceil(asked / 1000)} s, more than ${WEBHOOK_WAIT_MAX / 1000} s)` };
    const wait = asked ?? transportBackoffMs(n - 1, WEBHOOK_BACKOFF, o.clock.random);
    await o.onRetry?.(last, wait);
    await o.clock.sleep(wait);
  }
  return last;
}
