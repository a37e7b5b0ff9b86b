// Next.js 16's proxy (the renamed middleware): runs before every route. Thin on purpose: the rules
// live in lib/server/request-guard.ts (DESIGN: The dashboard, "Request checks").
import { NextResponse, type NextRequest } from 'next/server';
import { NONCE_HEADER, PATH_HEADER, checkRequest, guardSettings, newNonce, securityHeaders } from '@/lib/server/request-guard';

export function proxy(req: NextRequest): NextResponse {
  const settings = guardSettings(process.env);
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
  } else {
    res = new NextResponse(`${verdict.reason}\n`, { status: verdict.status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
  for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  return res;
}
