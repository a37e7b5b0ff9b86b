// Access that fails closed, tried as an attacker would (DESIGN: The dashboard, "Who is asking, and
// from where"; "Threat model"). Real HTTP requests reach `aqven serve`'s own server
// (dashboardServer: it stamps each request with its socket's address) and are handed to the
// dashboard's real route handlers; each connection's socket address is set by the test, so a
// request can come "from the network" while it travels over loopback. Plain `next start` is the same
// handlers with nobody stamping.
import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, createUser } from '@/db/account-queries';
import type { Db } from '@/db/types';
import { dashboardServer, UNTRUSTED_PROXY_WARNING } from '@/lib/cli/serve';
import { PEER_HEADER, PEER_SIG_HEADER } from '@/lib/shared/peer';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let db: Db;

type Route = (req: Request) => Promise<Response>;

/** Hands a node request to a route handler as Next.js would: a Request with the (stamped) headers. */
function routeHandler(route: () => Promise<Route>) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const url = `http://${req.headers.host ?? 'localhost'}${req.url}`;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const r = Object.assign(new Request(url, { method: req.method, headers, body }), { nextUrl: new URL(url) });
    const out = await (await route())(r);
    res.writeHead(out.status, { 'content-type': out.headers.get('content-type') ?? 'text/plain' }).end(await out.text());
  };
}

const listRuns: () => Promise<Route> = async () => (await import('@/app/api/runs/route')).GET as unknown as Route;

/** A server answering with `handler`; every connection's socket reports `peer.address` as its remote address. */
async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  opts: { stamped: boolean; peer: { address: string } },
): Promise<{ port: number; server: Server; warnings: string[] }> {
  const warnings: string[] = [];
  const server = opts.stamped
    ? dashboardServer(Promise.resolve(handler), undefined, { trustProxy: process.env.AQVEN_TRUST_PROXY === '1', onWarning: (w) => warnings.push(w) })
    : // plain `next start`: the same handlers, nothing stamped
      (await import('node:http')).createServer((req, res) => void handler(req, res));
  server.on('connection', (socket: Socket) => Object.defineProperty(socket, 'remoteAddress', { get: () => opts.peer.address }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server, warnings };
}

function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

const NO_ACCOUNT =
  /^\{"error":"no account exists yet, and this request is not known to come from this machine: on the server, create the first account \(aqven user add NAME --role admin\), or serve the dashboard with aqven serve and open it there","code":"E_AUTH"\}$/;

beforeAll(async () => {
  ({
    session: { db },
  } = await dashboard.open());
}, 90_000);

afterAll(async () => {
  delete process.env.AQVEN_TRUST_PROXY;
  await dashboard.close();
});

describe('no account yet', () => {
  const peer = { address: '127.0.0.1' };
  let stamped: Awaited<ReturnType<typeof listen>>;
  let plain: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    stamped = await listen(routeHandler(listRuns), { stamped: true, peer });
    plain = await listen(routeHandler(listRuns), { stamped: false, peer });
  });
  afterAll(async () => {
    for (const s of [stamped, plain]) await new Promise((r) => s.server.close(r));
  });

  it('aqven serve, a loopback socket and Host: the open dashboard (the demo)', async () => {
    peer.address = '127.0.0.1';
    expect(await get(stamped.port, '/api/runs', { host: 'localhost:3000' })).toMatchObject({ status: 200 });
    peer.address = '::ffff:127.0.0.1';
    expect(await get(stamped.port, '/api/runs', { host: '127.0.0.1:3000' })).toMatchObject({ status: 200 });
  });

  it('aqven serve, a socket from the network writing Host: localhost: refused, saying what to run', async () => {
    peer.address = '203.0.113.9';
    const res = await get(stamped.port, '/api/runs', { host: 'localhost:3000' });
    expect(res.status).toBe(401);
    expect(res.body).toMatch(NO_ACCOUNT);
  });

  it('aqven serve, a socket from the network forging the stamp headers: refused', async () => {
    peer.address = '203.0.113.9';
    const forged = await get(stamped.port, '/api/runs', { host: 'localhost', [PEER_HEADER]: '127.0.0.1', [PEER_SIG_HEADER]: 'ab'.repeat(32) });
    expect(forged.status).toBe(401);
  });

  it('plain next start: the peer is unknown, so never this machine, whatever the Host or a hand-set AQVEN_PEER_HEADER says', async () => {
    peer.address = '203.0.113.9';
    expect(await get(plain.port, '/api/runs', { host: 'localhost:3000' })).toMatchObject({ status: 401, body: expect.stringMatching(NO_ACCOUNT) });
    process.env.AQVEN_PEER_HEADER = '1';
    try {
      expect((await get(plain.port, '/api/runs', { host: 'localhost:3000', [PEER_HEADER]: '127.0.0.1' })).status).toBe(401);
    } finally {
      delete process.env.AQVEN_PEER_HEADER;
    }
    // even from this machine's own loopback: nothing vouches for the socket
    peer.address = '127.0.0.1';
    expect((await get(plain.port, '/api/runs', { host: 'localhost:3000' })).status).toBe(401);
  });

  it('a local reverse proxy (loopback socket) passing a proxy header while AQVEN_TRUST_PROXY is unset: refused, and serve warns once', async () => {
    peer.address = '127.0.0.1';
    const proxied: Record<string, string>[] = [
      { 'x-forwarded-for': '198.51.100.4' },
      { forwarded: 'for=198.51.100.4' },
      { 'x-forwarded-host': 'localhost' },
      { 'x-real-ip': '198.51.100.4' },
    ];
    for (const h of proxied) {
      expect((await get(stamped.port, '/api/runs', { host: 'localhost:3000', ...h })).status, JSON.stringify(h)).toBe(401);
    }
    expect(stamped.warnings).toEqual([UNTRUSTED_PROXY_WARNING]);
  });

  it('AQVEN_TRUST_PROXY=1: the client is the proxy’s last X-Forwarded-For hop; with no forwarding header it is unknown and refused', async () => {
    process.env.AQVEN_TRUST_PROXY = '1';
    peer.address = '127.0.0.1';
    try {
      expect((await get(stamped.port, '/api/runs', { host: 'localhost:3000' })).status).toBe(401);
      expect((await get(stamped.port, '/api/runs', { host: 'localhost:3000', 'x-forwarded-for': '127.0.0.1, 198.51.100.4' })).status).toBe(401);
      expect((await get(stamped.port, '/api/runs', { host: 'localhost:3000', 'x-forwarded-for': '127.0.0.1' })).status).toBe(200);
    } finally {
      delete process.env.AQVEN_TRUST_PROXY;
    }
  });
});

describe('once an account exists', () => {
  const peer = { address: '127.0.0.1' };
  let stamped: Awaited<ReturnType<typeof listen>>;
  let token: string;
  beforeAll(async () => {
    stamped = await listen(routeHandler(listRuns), { stamped: true, peer });
    await createUser(db, { name: 'ana', role: 'admin', password: 'a long enough password' }, Date.now());
    ({ token } = await createToken(db, { name: 'ci', role: 'viewer', createdBy: 'ana', expiresAt: null }, Date.now()));
  });
  afterAll(async () => {
    await new Promise((r) => stamped.server.close(r));
  });

  it('this machine too must sign in; a token is accepted by the API from anywhere', async () => {
    peer.address = '127.0.0.1';
    expect(await get(stamped.port, '/api/runs', { host: 'localhost:3000' })).toMatchObject({ status: 401, body: '{"error":"sign in first","code":"E_AUTH"}' });
    peer.address = '203.0.113.9';
    expect((await get(stamped.port, '/api/runs', { host: 'localhost:3000', authorization: `Bearer ${token}` })).status).toBe(200);
  });
});
