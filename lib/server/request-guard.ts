// The dashboard's request checks (DESIGN: The dashboard, "Request checks"): which Host a request may
// name (DNS rebinding), which Origin a state-changing request must carry (cross-site forms and
// fetches), how large a body may be, and the security headers of every response, its
// Content-Security-Policy with a nonce per request. Pure: the proxy (proxy.ts) hands in the
// request's facts, the environment and the nonce's random bytes; no Next.js, no globals.
import type { Refusal } from '@/lib/contracts/refusal';
import { bodyTooLarge } from '@/lib/contracts/request-body';

/** Largest request body the dashboard reads, unless AQVEN_MAX_BODY_BYTES says otherwise (DESIGN: Limits). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Set on every response beside its Content-Security-Policy: no framing, no cross-origin referrer, no content sniffing. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
};

/** The request header that hands the nonce to server components (`headers().get('x-nonce')`). */
export const NONCE_HEADER = 'x-nonce';
/** the path and query the proxy forwards to pages (the login page returns to it after signing in) */
export const PATH_HEADER = 'x-aqven-path';

const NONCE_BYTES = 16;
// what a CSP nonce-source may hold (base64 or base64url); anything else could break out of the header
const NONCE_RE = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** A fresh nonce: 16 random bytes (128 bits, unguessable), base64. `fill` is Web Crypto's by default. */
export function newNonce(fill: (bytes: Uint8Array) => Uint8Array = (b) => globalThis.crypto.getRandomValues(b)): string {
  const bytes = fill(new Uint8Array(NONCE_BYTES));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The dashboard's Content-Security-Policy for one response. Scripts run only with this request's
 * nonce (Next.js reads it from the forwarded request's policy and puts it on its own scripts), and
 * what they load ('strict-dynamic'); no inline script. `next dev` also needs 'unsafe-eval' (React
 * rebuilds server error stacks with eval); a production build never evals.
 */
export function contentSecurityPolicy(nonce: string, development: boolean): string {
  if (!NONCE_RE.test(nonce)) throw new Error('a CSP nonce must be base64');
  const directives = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ''}`,
    // Inline styles stay allowed, and without the nonce (a nonce would void 'unsafe-inline'): the
    // timeline's and outcome bars' positions are style="…" attributes, which no nonce covers, and
    // Next.js's own 404, notFound() and error pages render a <style> without it. Styles cannot run
    // script, and img-src/font-src keep injected CSS from loading anything from elsewhere.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ];
  return directives.join('; ');
}

/** Every security header of a response, its policy built around `nonce`. */
export function securityHeaders(nonce: string, development: boolean): Record<string, string> {
  return { ...SECURITY_HEADERS, 'Content-Security-Policy': contentSecurityPolicy(nonce, development) };
}

export interface GuardSettings {
  /** hostname and port of AQVEN_PUBLIC_URL, or null when unset or unreadable */
  publicHost: HostPort | null;
  /** AQVEN_PUBLIC_URL was set but is not an http(s) URL: only loopback hosts pass */
  publicUrlInvalid: boolean;
  /** AQVEN_TRUST_PROXY=1: X-Forwarded-Host and X-Forwarded-Proto name the request's host */
  trustProxy: boolean;
  maxBodyBytes: number;
  /** NODE_ENV=development (`next dev`): the script policy also allows eval */
  development: boolean;
}

export interface HostPort {
  hostname: string;
  /** explicit port, '' when none was written */
  port: string;
  /** the port an empty one stands for (80/443 by scheme) */
  defaultPort: string;
}

/** What the checks read of a request. `proto` is the scheme the server saw ("http" or "https"). */
export interface RequestFacts {
  method: string;
  pathname: string;
  proto: string;
  headers: { get(name: string): string | null };
}

/** Passed, or refused: a foreign host or origin in one line of plain text; a body too large as the API's refusal (E_BODY). */
export type Verdict = { ok: true } | { ok: false; status: 403 | 421; reason: string } | { ok: false; status: 413; refusal: Refusal };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };
// a name or IPv4 address, or a bracketed IPv6 address, with an optional port; nothing else
const HOST_RE = /^(?:([a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)|(\[[0-9a-f:.]+\]))(?::(\d{1,5}))?$/i;

export function guardSettings(env: Readonly<Record<string, string | undefined>>): GuardSettings {
  const raw = env.AQVEN_PUBLIC_URL?.trim();
  const publicHost = raw ? publicUrlHost(raw) : null;
  return {
    publicHost,
    publicUrlInvalid: Boolean(raw) && publicHost === null,
    trustProxy: env.AQVEN_TRUST_PROXY === '1',
    maxBodyBytes: parseMaxBodyBytes(env.AQVEN_MAX_BODY_BYTES),
    development: env.NODE_ENV === 'development',
  };
}

/** A positive whole number of bytes; anything else (unset, "1mb", 0) keeps the default. */
export function parseMaxBodyBytes(raw: string | undefined): number {
  if (!raw || !/^\d+$/.test(raw.trim())) return DEFAULT_MAX_BODY_BYTES;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_MAX_BODY_BYTES;
}

function publicUrlHost(raw: string): HostPort | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const scheme = url.protocol.slice(0, -1);
  if (!(scheme in DEFAULT_PORT)) return null;
  return { hostname: url.hostname.toLowerCase(), port: url.port, defaultPort: DEFAULT_PORT[scheme] };
}

/** Parses a Host header value ("example.com:8080", "[::1]"); null when it is not a plain host. */
export function parseHost(value: string, proto: string): HostPort | null {
  const m = HOST_RE.exec(value.trim());
  if (!m) return null;
  const port = m[3] ?? '';
  if (port && Number(port) > 65535) return null;
  return { hostname: (m[1] ?? m[2]).toLowerCase(), port, defaultPort: DEFAULT_PORT[proto] ?? '80' };
}

function portOf(h: HostPort): string {
  return h.port || h.defaultPort;
}

/** The first value of a possibly comma-joined forwarded header. */
function firstValue(value: string | null): string | null {
  const first = value?.split(',')[0]?.trim();
  return first ? first : null;
}

/** The host the request names, and its scheme: the Host header, or the forwarded ones behind a trusted proxy. */
export function requestHost(req: RequestFacts, s: GuardSettings): { raw: string | null; proto: string } {
  const fwdProto = s.trustProxy ? firstValue(req.headers.get('x-forwarded-proto'))?.toLowerCase() : undefined;
  const proto = fwdProto === 'http' || fwdProto === 'https' ? fwdProto : req.proto.replace(/:$/, '');
  const fwdHost = s.trustProxy ? firstValue(req.headers.get('x-forwarded-host')) : null;
  return { raw: fwdHost ?? req.headers.get('host'), proto };
}

export function isAllowedHost(host: HostPort, s: GuardSettings): boolean {
  if (LOOPBACK.has(host.hostname)) return true;
  const p = s.publicHost;
  // a Host without a port stands for the public URL's scheme's port (a TLS proxy forwards "example.com")
  return p !== null && host.hostname === p.hostname && (host.port || p.defaultPort) === portOf(p);
}

/** Whether the Origin header names the same host (and port) as the request's checked Host. */
export function sameOriginHost(origin: string, host: HostPort): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, some redirects) and garbage
  }
  const scheme = url.protocol.slice(0, -1);
  if (!(scheme in DEFAULT_PORT) || url.origin === 'null') return false;
  const originPort = url.port || DEFAULT_PORT[scheme];
  return url.hostname.toLowerCase() === host.hostname && (host.port || DEFAULT_PORT[scheme]) === originPort;
}

/** GET and HEAD read; every other method (server actions are POSTs) may change something. */
export function changesState(method: string): boolean {
  const m = method.toUpperCase();
  return m !== 'GET' && m !== 'HEAD';
}

/** Services post runs with a bearer token instead of a browser's Origin. Not authenticated yet. */
function bearerApiCall(req: RequestFacts): boolean {
  return req.method.toUpperCase() === 'POST' && req.pathname.replace(/\/+$/, '') === '/api/runs' && /^bearer\s+\S/i.test(req.headers.get('authorization') ?? '');
}

/** Whether a declared Content-Length is over the cap (a body without one is capped where it is read). */
export function declaredTooLarge(contentLength: string | null, maxBodyBytes: number): boolean {
  if (contentLength === null) return false;
  const v = contentLength.trim();
  // a malformed length is the server's to refuse; a huge one is ours
  return /^\d+$/.test(v) && Number(v) > maxBodyBytes;
}

/** All checks in order: host, then origin, then declared size. */
export function checkRequest(req: RequestFacts, s: GuardSettings): Verdict {
  const { raw, proto } = requestHost(req, s);
  if (raw === null) return { ok: false, status: 421, reason: 'refused: the request names no Host' };
  const host = parseHost(raw, proto);
  if (!host) return { ok: false, status: 421, reason: 'refused: the Host header is not a host name' };
  if (!isAllowedHost(host, s)) {
    const allowed = s.publicHost ? `loopback or ${s.publicHost.hostname}` : 'loopback only; set AQVEN_PUBLIC_URL to serve another';
    const note = s.publicUrlInvalid ? ' (AQVEN_PUBLIC_URL is not an http(s) URL)' : '';
    return { ok: false, status: 421, reason: `refused: host ${host.hostname} is not served here (${allowed})${note}` };
  }
  if (changesState(req.method) && !bearerApiCall(req)) {
    const origin = req.headers.get('origin');
    if (!origin) return { ok: false, status: 403, reason: 'refused: a request that changes something must carry an Origin header' };
    if (!sameOriginHost(origin, host)) return { ok: false, status: 403, reason: 'refused: the Origin header names another site than the Host' };
  }
  if (declaredTooLarge(req.headers.get('content-length'), s.maxBodyBytes)) {
    return { ok: false, status: 413, refusal: bodyTooLarge(s.maxBodyBytes) };
  }
  return { ok: true };
}
