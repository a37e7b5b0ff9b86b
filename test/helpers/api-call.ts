// Calls the API's route handlers in the test process, as a request from this machine (the open
// dashboard unless `headers` carry a credential): the status, the headers a service reads and the
// JSON body, with the time the answer took.
import { NextRequest } from 'next/server';
import { LOCAL_HEADERS } from './next-headers';

export interface ApiAnswer<B = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: B;
  ms: number;
}

async function answered<B>(res: Response, t0: number): Promise<ApiAnswer<B>> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as B, ms: Date.now() - t0 };
}

/** POST /api/runs with `body` (JSON, or text as given) and extra headers (Prefer, Idempotency-Key). */
export async function postRun<B = Record<string, unknown>>(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<ApiAnswer<B>> {
  const { POST } = await import('@/app/api/runs/route');
  const t0 = Date.now();
  const req = new NextRequest('http://localhost/api/runs', {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...LOCAL_HEADERS, ...headers },
    signal,
  });
  return answered<B>(await POST(req), t0);
}

/** GET /api/runs/:id with a query (`?wait=2`). */
export async function getRun<B = Record<string, unknown>>(id: string, query = '', headers: Record<string, string> = {}, signal?: AbortSignal): Promise<ApiAnswer<B>> {
  const { GET } = await import('@/app/api/runs/[id]/route');
  const t0 = Date.now();
  const req = new Request(`http://localhost/api/runs/${id}${query}`, { headers: { ...LOCAL_HEADERS, ...headers }, signal });
  return answered<B>(await GET(req, { params: Promise.resolve({ id }) }), t0);
}
