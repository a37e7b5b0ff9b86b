// Next.js 16's proxy (the renamed middleware): runs before every route. Thin on purpose: its answer is
// lib/server/guarded-response.ts's, the rules lib/server/request-guard.ts's (DESIGN: The dashboard,
// "Request checks").
import type { NextRequest, NextResponse } from 'next/server';
import { guardedResponse } from '@/lib/server/guarded-response';

export function proxy(req: NextRequest): NextResponse {
  return guardedResponse(req, process.env);
}
