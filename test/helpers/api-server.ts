// The HTTP API on a real socket for tests of its clients (test/api/client.test.ts) and of scrapers
// (GET /metrics, test/observe/prometheus.test.ts): a node:http server handing each request to the
// route handlers of app/ (the same handlers `aqven serve` runs, without a `next build`), stamped as a
// request from this machine (LOCAL_HEADERS) the way `aqven serve` stamps its loopback connections —
// or, with `{ serve: true }`, by `aqven serve`'s own server (dashboardServer: each request's peer
// stamped from its socket). Responses stream back as they are written (SSE).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { NextRequest } from 'next/server';
import { dashboardServer } from '@/lib/cli/serve';
import { LOCAL_HEADERS } from './next-headers';

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;

const ROUTES: Array<[RegExp, () => Promise<Record<string, unknown>>]> = [
  [/^\/api\/runs$/, () => import('@/app/api/runs/route')],
  [/^\/api\/runs\/(?<id>[^/]+)$/, () => import('@/app/api/runs/[id]/route')],
  [/^\/api\/runs\/(?<id>[^/]+)\/events$/, () => import('@/app/api/runs/[id]/events/route')],
  [/^\/api\/openapi\.json$/, () => import('@/app/api/openapi.json/route')],
  [/^\/metrics$/, () => import('@/app/metrics/route')],
];

async function answer(req: IncomingMessage, res: ServerResponse, stamped: boolean): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const route = ROUTES.map(([re, mod]) => ({ m: re.exec(url.pathname), mod })).find((r) => r.m);
  const handler = route && ((await route.mod())[req.method ?? 'GET'] as Handler | undefined);
  if (!route || !handler) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route","code":"E_ROUTE"}');
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  if (!stamped) for (const [name, value] of Object.entries(LOCAL_HEADERS)) headers.set(name, value);
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const out = await handler(new NextRequest(`http://localhost${url.pathname}${url.search}`, { method: req.method, headers, body }), {
    params: Promise.resolve({ ...route.m!.groups }),
  });
  res.writeHead(out.status, Object.fromEntries(out.headers));
  if (!out.body) {
    res.end();
    return;
  }
  const stream = Readable.fromWeb(out.body as import('node:stream/web').ReadableStream);
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** Serves the API on a free loopback port; close() ends it. `serve`: through `aqven serve`'s server, which stamps each request's socket. */
export async function apiServer(o: { serve?: boolean } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const handle = (req: IncomingMessage, res: ServerResponse) =>
    answer(req, res, o.serve === true).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(err), code: 'E_TEST_SERVER' }));
    });
  const server: Server = o.serve ? dashboardServer(Promise.resolve(handle)) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
