// Next.js 16's proxy (the renamed middleware): runs before every route. Thin on purpose: the rules
// live in lib/server/request-guard.ts (DESIGN: The dashboard, "Request checks").
import { NextResponse, type NextRequest } from 'next/server';
import { SECURITY_HEADERS, checkRequest, guardSettings } from '@/lib/server/request-guard';

export function proxy(req: NextRequest): NextResponse {
  const verdict = checkRequest(
    { method: req.method, pathname: req.nextUrl.pathname, proto: req.nextUrl.protocol, headers: req.headers },
    guardSettings(process.env),
  );
  const res = verdict.ok
    ? NextResponse.next()
    : new NextResponse(`${verdict.reason}\n`, { status: verdict.status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.headers.set(name, value);
  return res;
}
