// What the proxy (proxy.ts, Next.js 16's renamed middleware) answers for a request (DESIGN: The
// dashboard, "Request checks"): the request passed on with its nonce, or the check's refusal — a
// foreign host or origin in one line of plain text, a body too large as the API refuses it (E_BODY,
// as the route's capped read answers a body sent without a Content-Length) — each with the security
// headers. The rules themselves are request-guard.ts's.
import { NextResponse, type NextRequest } from 'next/server';
import { apiRefusal } from './api-refusal';
import { NONCE_HEADER, PATH_HEADER, checkRequest, guardSettings, newNonce, securityHeaders } from './request-guard';

/** The proxy's answer to `req` under the settings `env` gives. */
export function guardedResponse(req: NextRequest, env: Readonly<Record<string, string | undefined>>): NextResponse {
  const settings = guardSettings(env);
  const verdict = checkRequest({ method: req.method, pathname: req.nextUrl.pathname, proto: req.nextUrl.protocol, headers: req.headers }, settings);
  const nonce = newNonce();
  const headers = securityHeaders(nonce, settings.development);
  let res: NextResponse;
  if (verdict.ok) {
    // Next.js takes the nonce for its own scripts from the policy on the request it renders
    const forwarded = new Headers(req.headers);
    forwarded.set(NONCE_HEADER, nonce);
    // the page asked for, so the login page can come back to it (always ours: a client's own value is replaced)
    forwarded.set(PATH_HEADER, req.nextUrl.pathname + req.nextUrl.search);
    forwarded.set('Content-Security-Policy', headers['Content-Security-Policy']);
    res = NextResponse.next({ request: { headers: forwarded } });
  } else if (verdict.status === 413) {
    res = apiRefusal(413, verdict.refusal);
  } else {
    res = new NextResponse(`${verdict.reason}\n`, { status: verdict.status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
  for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  return res;
}
