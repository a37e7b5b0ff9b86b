// The wait a server asks for before the next try (DESIGN: Transport retry and rate limits, WIRE.md
// "Retry-After"): `retry-after-ms` → `retry-after` (delta-seconds, fractional seconds or HTTP-date)
// → Gemini `RetryInfo.retryDelay` in the error body. Every parser returns milliseconds, or null for
// "not given / does not parse / negative", which means: use the default backoff.

/** Anything with a case-insensitive `get`, e.g. a fetch `Headers`. */
export interface HeaderReader {
  get(name: string): string | null;
}

export type ServerWaitSource = 'retry-after-ms' | 'retry-after' | 'retry-info';

export interface ServerWait {
  ms: number;
  source: ServerWaitSource;
  /** the value as sent (trimmed; RetryInfo's proto form as `<seconds>s`), for the record of a pause */
  sent: string;
}

// Non-negative decimal number; the sign is rejected by the pattern, so "-1" is "unparseable".
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** `retry-after-ms: 1500` (non-standard, sent by OpenAI and Azure). */
export function parseRetryAfterMs(value: string | null | undefined): number | null {
  const v = value?.trim();
  if (!v || !DECIMAL.test(v)) return null;
  const ms = Number(v);
  return Number.isFinite(ms) ? Math.ceil(ms) : null;
}

/** `retry-after: 120`, `retry-after: 1.5` or `retry-after: <HTTP-date>`; a past date is 0. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  const v = value?.trim();
  if (!v) return null;
  if (DECIMAL.test(v)) {
    const s = Number(v);
    // round up: never retry earlier than asked
    return Number.isFinite(s) ? Math.ceil(s * 1000) : null;
  }
  const at = parseHttpDate(v, nowMs);
  return at === null ? null : Math.max(0, at - nowMs);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MON = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// RFC 9110 §5.6.7: IMF-fixdate, and the two obsolete forms a recipient must accept.
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MON} (\\d{4}) ${TIME} GMT$`, 'i');
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MON}-(\\d{2}) ${TIME} GMT$`, 'i');
const ASCTIME = new RegExp(`^${DAY} ${MON} ( \\d|\\d{2}) ${TIME} (\\d{4})$`, 'i');

function utc(year: number, month: string, day: number, h: number, m: number, s: number): number | null {
  const mi = MONTHS.indexOf(month.toLowerCase());
  if (mi < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return null;
  const t = Date.UTC(year, mi, day, h, m, Math.min(s, 59));
  // reject dates that roll over (Feb 30 → Mar 2)
  return new Date(t).getUTCDate() === day ? t : null;
}

/** An HTTP-date in any of its three forms, as epoch ms; null when it is not one. */
export function parseHttpDate(value: string, nowMs: number): number | null {
  let m = IMF_FIXDATE.exec(value);
  if (m) return utc(+m[3]!, m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  m = RFC850.exec(value);
  if (m) {
    // two-digit year: a date more than 50 years in the future means the previous century
    const nowYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + +m[3]!;
    if (year > nowYear + 50) year -= 100;
    return utc(year, m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  }
  m = ASCTIME.exec(value);
  if (m) return utc(+m[6]!, m[1]!, +m[2]!.trim(), +m[3]!, +m[4]!, +m[5]!);
  return null;
}

const DURATION = /^(\d+(?:\.\d+)?)s$/;

/** Gemini: `{"error": {"details": [{"@type": "…google.rpc.RetryInfo", "retryDelay": "34.4s"}]}}`. */
export function parseRetryInfo(body: unknown): number | null {
  return readRetryInfo(body)?.ms ?? null;
}

/** RetryInfo's wait, and its `retryDelay` as the body carried it (the proto form as `<seconds>s`). */
function readRetryInfo(body: unknown): { ms: number; sent: string } | null {
  const details = (body as { error?: { details?: unknown } } | null)?.error?.details;
  if (!Array.isArray(details)) return null;
  for (const d of details) {
    if (typeof d !== 'object' || d === null) continue;
    const { '@type': type, retryDelay } = d as { '@type'?: unknown; retryDelay?: unknown };
    if (typeof type !== 'string' || !type.endsWith('google.rpc.RetryInfo')) continue;
    if (typeof retryDelay === 'string') {
      const m = DURATION.exec(retryDelay.trim());
      if (m) return { ms: Math.ceil(Number(m[1]) * 1000), sent: retryDelay };
    } else if (typeof retryDelay === 'object' && retryDelay !== null) {
      // the proto form {seconds, nanos}, which some clients echo back
      const { seconds, nanos } = retryDelay as { seconds?: unknown; nanos?: unknown };
      const s = Number(seconds ?? 0) + Number(nanos ?? 0) / 1e9;
      if (Number.isFinite(s) && s >= 0) return { ms: Math.ceil(s * 1000), sent: `${s}s` };
    }
  }
  return null;
}

/** The server-given wait, in precedence order; null = none given (use the default backoff). */
export function serverWait(headers: HeaderReader, body: unknown, nowMs: number): ServerWait | null {
  const msHeader = headers.get('retry-after-ms');
  const ms = parseRetryAfterMs(msHeader);
  if (ms !== null) return { ms, source: 'retry-after-ms', sent: asSent(msHeader!) };
  const raHeader = headers.get('retry-after');
  const ra = parseRetryAfter(raHeader, nowMs);
  if (ra !== null) return { ms: ra, source: 'retry-after', sent: asSent(raHeader!) };
  const ri = readRetryInfo(body);
  if (ri !== null) return { ms: ri.ms, source: 'retry-info', sent: asSent(ri.sent) };
  return null;
}

/** A value that parsed is a number or an HTTP-date: only an absurdly long number needs shortening. */
function asSent(value: string): string {
  const v = value.trim();
  return v.length > 80 ? `${v.slice(0, 79)}…` : v;
}
