// `aqven serve` (DESIGN: CLI; The dashboard): the refusals before listening, which need no build of
// the dashboard (the command line run in this process: aqvenHere), and the peer header a client
// cannot forge. The dashboard actually served by the real bin and stopped by SIGTERM is a browser
// spec's (e2e/serve.spec.ts), where the build is made: tests here never build the dashboard.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardServer, isLoopbackHost, NO_USER_REFUSAL, PEER_HEADER, repoRoot, type Refusal } from '@/lib/cli/serve';
import { stampedPeer } from '@/lib/shared/peer';
import { rawRequest } from '../helpers/raw-request';
import { copyShowcase } from '../helpers/showcase';
import { aqvenHere as aqven, ROOT } from './aqven-process';

const ENV = { AQVEN_DATABASE_URL: undefined, AQVEN_PUBLIC_URL: undefined, PORT: undefined };

/** GET `path` from a server on 127.0.0.1 with extra raw headers; the status, headers and body. */
describe('which hosts are loopback', () => {
  it('127.0.0.0/8, ::1 in any spelling, IPv4-mapped 127/8 and localhost; nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.7', '128.0.0.1', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io', '::2']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('the CLI finds the checkout it runs from, where the dashboard is built', () => {
    expect(repoRoot().replace(/\/$/, '')).toBe(ROOT.replace(/\/$/, ''));
  });
});

describe('the peer header', () => {
  let port: number;
  const server = dashboardServer(
    Promise.resolve(async (req, res) => {
      res.setHeader('content-type', 'application/json');
      const stamped = stampedPeer({ get: (name) => (req.headers[name] === undefined ? null : String(req.headers[name])) });
      res.end(JSON.stringify({ stamped, raw: req.rawHeaders.filter((_, i, all) => all[i - 1]?.toLowerCase() === PEER_HEADER).length }));
    }),
  );
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('is the socket peer and the proxy headers as the client sent them, whatever it sent under the stamp names', async () => {
    const plain = await rawRequest(port, '/');
    expect(JSON.parse(plain.body)).toEqual({ stamped: { address: '127.0.0.1', forwardedFor: null, proxied: false }, raw: 1 });
    const forged = await rawRequest(port, '/', {
      headers: { 'X-Aqven-Peer': ['10.9.8.7', '192.168.0.1'], 'X-Aqven-Peer-Sig': 'ab'.repeat(32), 'X-Forwarded-For': '198.51.100.4' },
    });
    expect(JSON.parse(forged.body)).toEqual({ stamped: { address: '127.0.0.1', forwardedFor: '198.51.100.4', proxied: true }, raw: 1 });
  });

  it('tells each refusal — a 4xx but 404 — by method, path without its query, and status; nothing else', async () => {
    const refusals: Refusal[] = [];
    const telling = dashboardServer(
      Promise.resolve(async (req, res) => {
        const status = Number(/^\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
        res.writeHead(status).end();
      }),
      undefined,
      { onRefusal: (r) => refusals.push(r) },
    );
    await new Promise<void>((resolve) => telling.listen(0, '127.0.0.1', resolve));
    try {
      const at = (telling.address() as AddressInfo).port;
      for (const path of ['/200', '/401/api/runs?token=secret-in-a-query', '/404', '/429', '/500', '/302']) await rawRequest(at, path);
      expect(refusals).toEqual([
        { method: 'GET', path: '/401/api/runs', status: 401 },
        { method: 'GET', path: '/429', status: 429 },
      ]);
    } finally {
      await new Promise((resolve) => telling.close(resolve));
    }
  });

  it('a handler that throws answers 500 and the server goes on', async () => {
    const failing = dashboardServer(Promise.reject(new Error('no build')));
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const res = await rawRequest((failing.address() as AddressInfo).port, '/runs');
      expect(res).toMatchObject({ status: 500, body: 'internal error\n' });
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });
});

describe('aqven serve refuses before listening (no build needed)', () => {
  const dir = copyShowcase();

  it('beyond loopback while no user exists: one line, exit 2', async () => {
    const res = await aqven(['serve', '--host', '0.0.0.0', '--port', '0', '--project', dir], ENV);
    expect(res).toMatchObject({ code: 2, out: '', err: `${NO_USER_REFUSAL}\n` });
    expect(res.err).toBe('aqven serve: no user exists yet, so the dashboard only listens on loopback; create one first: aqven user add NAME --role admin\n');
  });

  it('beyond loopback without a public URL once a user exists: exit 2, naming --public-url', async () => {
    expect((await aqven(['user', 'add', 'ana', '--role', 'admin', '--project', dir], ENV)).code).toBe(0);
    const res = await aqven(['serve', '--host', '0.0.0.0', '--port', '8123', '--project', dir], ENV);
    expect(res.code).toBe(2);
    expect(res.out).toBe('');
    expect(res.err).toBe(
      "aqven serve: the dashboard answers only requests for its public URL's host, and none is set for --host 0.0.0.0: pass --public-url http://HOST:8123 (the name browsers use to reach it), or set AQVEN_PUBLIC_URL\n",
    );
    expect((await aqven(['serve', '--host', '10.1.2.3', '--project', dir], ENV)).err).toContain('pass --public-url http://10.1.2.3:3000');
  });

  it('PostgreSQL mode without AQVEN_AUTH_SECRET, or with one too short: exit 2, saying how to make one (nothing built, the database not asked)', async () => {
    const pg = { ...ENV, AQVEN_DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none', AQVEN_AUTH_SECRET: undefined };
    expect(await aqven(['serve', '--port', '0', '--project', dir], pg)).toMatchObject({
      code: 2,
      out: '',
      err: "aqven serve: AQVEN_AUTH_SECRET is required with a PostgreSQL database (AQVEN_DATABASE_URL): it signs the dashboard's session cookies and is never kept in the database; make one with `openssl rand -hex 32` and give every dashboard process the same value\n",
    });
    expect(await aqven(['serve', '--port', '0', '--project', dir], { ...pg, AQVEN_AUTH_SECRET: 'short' })).toMatchObject({
      code: 2,
      err: 'aqven serve: AQVEN_AUTH_SECRET must be at least 32 characters; make one with `openssl rand -hex 32`\n',
    });
  });

  it('a bad port or public URL is bad usage', async () => {
    expect(await aqven(['serve', '--port', 'eighty', '--project', dir], ENV)).toMatchObject({
      code: 2,
      err: 'aqven serve: --port must be a whole number from 0 to 65535, got "eighty"\n',
    });
    expect((await aqven(['serve', '--port', '70000', '--project', dir], ENV)).code).toBe(2);
    const ftp = await aqven(['serve', '--host', '0.0.0.0', '--public-url', 'ftp://files.example', '--project', dir], ENV);
    expect(ftp).toMatchObject({ code: 2, err: 'aqven serve: the public URL must be an http(s) URL such as http://aqven.example.com:3000, got "ftp://files.example"\n' });
  });

  it('a log format or level it does not know is bad usage, named', async () => {
    expect(await aqven(['serve', '--port', '0', '--project', dir], { ...ENV, AQVEN_LOG_FORMAT: 'logfmt' })).toMatchObject({
      code: 2,
      out: '',
      err: 'aqven serve: AQVEN_LOG_FORMAT must be one of json, pretty, got "logfmt"\n',
    });
  });
});
