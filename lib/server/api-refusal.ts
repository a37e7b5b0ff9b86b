// How an API route refuses a request (DESIGN: The dashboard, Routes): `{error, code}` — and `field`
// when the refusal is about one field of the input — with its status, and `Retry-After` when waiting
// helps. The routes and the proxy's size check answer through it alike.
import { NextResponse } from 'next/server';

export interface ApiRefusalMore {
  /** the input field the refusal is about */
  field?: string;
  /** seconds until a retry may pass (a 429) */
  retryAfterS?: number;
}

/** The refusal `r` as the API answers it, with `status`. */
export function apiRefusal(status: number, r: { code: string; message: string }, more: ApiRefusalMore = {}): NextResponse {
  const headers = more.retryAfterS === undefined ? undefined : { 'retry-after': String(more.retryAfterS) };
  return NextResponse.json({ error: r.message, code: r.code, ...(more.field !== undefined && { field: more.field }) }, { status, headers });
}
