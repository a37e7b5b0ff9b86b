import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_BODY_BYTES,
  SECURITY_HEADERS,
  checkRequest,
  contentSecurityPolicy,
  guardSettings,
  newNonce,
  parseMaxBodyBytes,
  securityHeaders,
  type RequestFacts,
} from './request-guard';

function req(method: string, headers: Record<string, string>, pathname = '/api/runs', proto = 'http:'): RequestFacts {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, pathname, proto, headers: { get: (name: string) => lower[name.toLowerCase()] ?? null } };
}

const local = guardSettings({});
const shared = guardSettings({ AQVEN_PUBLIC_URL: 'https://aqven.example.com' });

describe('the Host check (DNS rebinding)', () => {
  it.each(['localhost', 'localhost:3000', '127.0.0.1', '127.0.0.1:3311', '[::1]', '[::1]:8080', 'LOCALHOST:1'])('serves the loopback host %s', (host) => {
    expect(checkRequest(req('GET', { host }), local)).toEqual({ ok: true });
  });

  it.each(['evil.example', 'evil.example:3311', '127.0.0.1.evil.example', 'localhost.evil.example', '10.0.0.5:3311', 'aqven.example.com'])(
    'refuses %s when no public URL is set, with a one-line reason',
    (host) => {
      const v = checkRequest(req('GET', { host }), local);
      expect(v).toMatchObject({ ok: false, status: 421 });
      if (!v.ok && 'reason' in v) expect(v.reason).not.toContain('\n');
      else throw new Error('a host refusal is one line of text');
    },
  );

  it('refuses a request without a Host, or with something else in it', () => {
    expect(checkRequest(req('GET', {}), local)).toMatchObject({ ok: false, status: 421 });
    for (const host of ['user@evil.example', 'a/b', 'localhost:99999', 'local host', ''])
      expect(checkRequest(req('GET', { host }), local), host).toMatchObject({ ok: false, status: 421 });
  });

  it("serves AQVEN_PUBLIC_URL's host (its default port implied) and still loopback, nothing else", () => {
    expect(checkRequest(req('GET', { host: 'aqven.example.com' }), shared)).toEqual({ ok: true });
    expect(checkRequest(req('GET', { host: 'AQVEN.example.com:443' }), shared)).toEqual({ ok: true });
    expect(checkRequest(req('GET', { host: 'localhost:3000' }), shared)).toEqual({ ok: true });
    expect(checkRequest(req('GET', { host: 'aqven.example.com:8443' }), shared)).toMatchObject({ ok: false, status: 421 });
    expect(checkRequest(req('GET', { host: 'other.example.com' }), shared)).toMatchObject({ ok: false, status: 421 });
    const withPort = guardSettings({ AQVEN_PUBLIC_URL: 'http://aqven.internal:8080/dash' });
    expect(checkRequest(req('GET', { host: 'aqven.internal:8080' }), withPort)).toEqual({ ok: true });
    expect(checkRequest(req('GET', { host: 'aqven.internal' }), withPort)).toMatchObject({ ok: false });
  });

  it('an unreadable AQVEN_PUBLIC_URL serves loopback only and says why', () => {
    const bad = guardSettings({ AQVEN_PUBLIC_URL: 'aqven.example.com' });
    expect(bad.publicUrlInvalid).toBe(true);
    const v = checkRequest(req('GET', { host: 'aqven.example.com' }), bad);
    expect(v.ok).toBe(false);
    expect(v).toMatchObject({ ok: false, status: 421, reason: expect.stringContaining('AQVEN_PUBLIC_URL') });
    expect(checkRequest(req('GET', { host: '127.0.0.1' }), bad)).toEqual({ ok: true });
    expect(guardSettings({ AQVEN_PUBLIC_URL: 'ftp://aqven.example.com' }).publicUrlInvalid).toBe(true);
  });
});

describe('X-Forwarded-Host and X-Forwarded-Proto', () => {
  const trusted = guardSettings({ AQVEN_PUBLIC_URL: 'https://aqven.example.com', AQVEN_TRUST_PROXY: '1' });

  it('are ignored unless AQVEN_TRUST_PROXY=1', () => {
    // a forged forwarded host does not get a foreign Host in, nor a served one out
    expect(checkRequest(req('GET', { host: 'evil.example', 'x-forwarded-host': 'localhost' }), shared)).toMatchObject({ ok: false, status: 421 });
    expect(checkRequest(req('GET', { host: 'localhost', 'x-forwarded-host': 'evil.example' }), shared)).toEqual({ ok: true });
    expect(guardSettings({ AQVEN_TRUST_PROXY: 'true' }).trustProxy).toBe(false);
  });

  it('name the host behind a trusted proxy (the first value of a list)', () => {
    expect(checkRequest(req('GET', { host: '10.0.0.5:3000', 'x-forwarded-host': 'aqven.example.com' }), trusted)).toEqual({ ok: true });
    expect(checkRequest(req('GET', { host: 'localhost:3000', 'x-forwarded-host': 'evil.example, aqven.example.com' }), trusted)).toMatchObject({ ok: false, status: 421 });
    // without the forwarded host the Host header decides
    expect(checkRequest(req('GET', { host: 'aqven.example.com' }), trusted)).toEqual({ ok: true });
  });

  it('the forwarded scheme decides which port an Origin without one stands for', () => {
    const post = (h: Record<string, string>) => checkRequest(req('POST', { 'x-forwarded-host': 'aqven.example.com', host: '10.0.0.5:3000', ...h }), trusted);
    expect(post({ 'x-forwarded-proto': 'https', origin: 'https://aqven.example.com' })).toEqual({ ok: true });
    expect(post({ 'x-forwarded-proto': 'https', origin: 'https://evil.example' })).toMatchObject({ ok: false, status: 403 });
  });
});

describe('the Origin check of state-changing requests', () => {
  const host = '127.0.0.1:3311';

  it('lets reads through without an Origin', () => {
    expect(checkRequest(req('GET', { host }), local)).toEqual({ ok: true });
    expect(checkRequest(req('HEAD', { host }), local)).toEqual({ ok: true });
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('%s needs an Origin naming the same host and port', (method) => {
    expect(checkRequest(req(method, { host, origin: 'http://127.0.0.1:3311' }), local)).toEqual({ ok: true });
    expect(checkRequest(req(method, { host }), local)).toMatchObject({ ok: false, status: 403 });
    for (const origin of ['http://evil.example', 'http://127.0.0.1:3312', 'http://localhost:3311', 'null', 'not a url', 'file:///etc', ''])
      expect(checkRequest(req(method, { host, origin }), local), origin).toMatchObject({ ok: false, status: 403 });
  });

  it('a server action (POST with Next-Action to a page) is checked like any POST', () => {
    const action = { host, 'next-action': 'abc123' };
    expect(checkRequest(req('POST', action, '/agents/triage'), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('POST', { ...action, origin: 'http://127.0.0.1:3311' }, '/agents/triage'), local)).toEqual({ ok: true });
  });

  it('compares default ports by scheme', () => {
    expect(checkRequest(req('POST', { host: 'aqven.example.com', origin: 'https://aqven.example.com' }), shared)).toEqual({ ok: true });
    expect(checkRequest(req('POST', { host: 'aqven.example.com:443', origin: 'https://aqven.example.com' }), shared)).toEqual({ ok: true });
    expect(checkRequest(req('POST', { host: 'localhost', origin: 'http://localhost:80' }), local)).toEqual({ ok: true });
    expect(checkRequest(req('POST', { host: 'localhost', origin: 'http://localhost:8080' }), local)).toMatchObject({ ok: false, status: 403 });
  });

  it('POST /api/runs with a bearer token needs no Origin (a service; not authenticated yet)', () => {
    expect(checkRequest(req('POST', { host, authorization: 'Bearer t0ken' }), local)).toEqual({ ok: true });
    expect(checkRequest(req('POST', { host, authorization: 'Bearer t0ken' }, '/api/runs/'), local)).toEqual({ ok: true });
    // only there, only POST, only a bearer with a value, and never past the Host check
    expect(checkRequest(req('POST', { host, authorization: 'Bearer t0ken' }, '/api/sim/scripts'), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('POST', { host, authorization: 'Bearer t0ken', 'next-action': 'x' }, '/agents/triage'), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('DELETE', { host, authorization: 'Bearer t0ken' }), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('POST', { host, authorization: 'Basic abc' }), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('POST', { host, authorization: 'Bearer ' }), local)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest(req('POST', { host: 'evil.example', authorization: 'Bearer t0ken' }), local)).toMatchObject({ ok: false, status: 421 });
  });
});

describe('the body size', () => {
  const post = (contentLength: string, s = local) => checkRequest(req('POST', { host: 'localhost', origin: 'http://localhost', 'content-length': contentLength }), s);

  it('refuses a declared Content-Length over AQVEN_MAX_BODY_BYTES (1 MiB by default) with 413', () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1_048_576);
    expect(post('1048576')).toEqual({ ok: true });
    expect(post('1048577')).toMatchObject({ ok: false, status: 413 });
    expect(post('52428800')).toMatchObject({ ok: false, status: 413 });
    expect(post('99999999999999999999999')).toMatchObject({ ok: false, status: 413 });
    const small = guardSettings({ AQVEN_MAX_BODY_BYTES: '100' });
    expect(post('100', small)).toEqual({ ok: true });
    expect(post('101', small)).toEqual({ ok: false, status: 413, refusal: { code: 'E_BODY', field: 'form', message: 'the body is larger than 100 bytes (AQVEN_MAX_BODY_BYTES)' } });
  });

  it('checks host and origin before size', () => {
    expect(checkRequest(req('POST', { host: 'evil.example', 'content-length': '9999999' }), local)).toMatchObject({ status: 421 });
    expect(checkRequest(req('POST', { host: 'localhost', 'content-length': '9999999' }), local)).toMatchObject({ status: 403 });
  });

  it('reads AQVEN_MAX_BODY_BYTES as a positive whole number of bytes, else the default', () => {
    expect(parseMaxBodyBytes('2048')).toBe(2048);
    expect(parseMaxBodyBytes(' 2048 ')).toBe(2048);
    for (const raw of [undefined, '', '0', '1mb', '-5', '1.5', '1e6', '99999999999999999999']) expect(parseMaxBodyBytes(raw), String(raw)).toBe(DEFAULT_MAX_BODY_BYTES);
  });
});

/** The policy's directives by name: `script-src` → its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(';').map((d) => {
      const [name, ...sources] = d.trim().split(/\s+/);
      return [name, sources] as const;
    }),
  );
}

describe('the Content-Security-Policy', () => {
  const nonce = 'q83vEjRWeJCrze8SNFZ4kA==';

  it("lets scripts run only with this request's nonce (and what they load): no inline script", () => {
    const script = directives(contentSecurityPolicy(nonce, false)).get('script-src');
    expect(script).toEqual(["'self'", `'nonce-${nonce}'`, "'strict-dynamic'"]);
    expect(script).not.toContain("'unsafe-inline'");
    expect(script).not.toContain("'unsafe-eval'");
  });

  it("adds 'unsafe-eval' for scripts only under next dev", () => {
    const dev = directives(contentSecurityPolicy(nonce, true));
    expect(dev.get('script-src')).toEqual(["'self'", `'nonce-${nonce}'`, "'strict-dynamic'", "'unsafe-eval'"]);
    expect([...dev].filter(([name]) => name !== 'script-src')).toEqual([...directives(contentSecurityPolicy(nonce, false))].filter(([name]) => name !== 'script-src'));
    expect(guardSettings({ NODE_ENV: 'development' }).development).toBe(true);
    expect(guardSettings({ NODE_ENV: 'production' }).development).toBe(false);
    expect(guardSettings({}).development).toBe(false);
  });

  it('allows inline styles without a nonce (style attributes cannot carry one), and nothing from elsewhere', () => {
    const d = directives(contentSecurityPolicy(nonce, false));
    expect(d.get('style-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(Object.fromEntries([...d].filter(([name]) => name !== 'script-src'))).toEqual({
      'default-src': ["'self'"],
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:'],
      'font-src': ["'self'"],
      'connect-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'self'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    });
    for (const sources of d.values()) for (const s of sources) expect(s).not.toMatch(/^(\*|https?:|http:\/\/|blob:)/);
  });

  it('refuses a nonce that is not base64 (it could end the directive or the header)', () => {
    for (const bad of ['', "abc'", 'abc; script-src *', 'a b', 'abc\r\nSet-Cookie: x=1']) expect(() => contentSecurityPolicy(bad, false), bad).toThrow(/base64/);
  });

  it('a nonce is 16 random bytes in base64, fresh for every call', () => {
    expect(newNonce((b) => b.fill(0xff))).toBe('/////////////////////w==');
    const seen = new Set(Array.from({ length: 100 }, () => newNonce()));
    expect(seen.size).toBe(100);
    for (const n of seen) expect(Buffer.from(n, 'base64')).toHaveLength(16);
  });

  it('every response carries the policy beside the static headers', () => {
    expect(securityHeaders(nonce, false)).toEqual({ ...SECURITY_HEADERS, 'Content-Security-Policy': contentSecurityPolicy(nonce, false) });
    expect(SECURITY_HEADERS).toEqual({ 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'same-origin', 'X-Content-Type-Options': 'nosniff' });
  });
});
