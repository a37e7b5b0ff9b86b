// `aqven worker --metrics-port`'s server (lib/observe/metrics-server.ts) on a real socket: a request
// from this machine reads the metrics; one through a proxy or naming another host needs a token made
// with --scope metrics — an API token will not do — and is refused in the API's JSON shape; nothing
// but GET /metrics is served. And the flags' usage errors.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '@/db/account-queries';
import { createMetrics } from '@/lib/observe/metrics';
import { METRICS_AUTH } from '@/lib/observe/metrics-access';
import { startMetricsServer, type MetricsServer } from '@/lib/observe/metrics-server';
import { aqvenHere } from '../cli/aqven-process';
import { openTestDb, type TestDb } from '../helpers/dialects';

let t: TestDb;
let server: MetricsServer;
let port = 0;
const tokens = { metrics: '', api: '' };

beforeAll(async () => {
  t = await openTestDb('sqlite');
  server = await startMetricsServer({ host: '127.0.0.1', port: 0, db: t.db, metrics: createMetrics() });
  port = Number(new URL(server.url).port);
  tokens.metrics = (await createToken(t.db, { name: 'prometheus', role: 'viewer', createdBy: null, expiresAt: null, scope: 'metrics' }, Date.now())).token;
  tokens.api = (await createToken(t.db, { name: 'svc', role: 'admin', createdBy: null, expiresAt: null }, Date.now())).token;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** A request to the server on loopback with these headers (Host as given, else 127.0.0.1:port). */
function get(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

describe("the worker's metrics server", () => {
  it('serves GET /metrics to this machine in the text format, the database gauges read', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${port}/metrics`);
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toMatch(/^# TYPE aqven_attempts_total counter$/m);
    expect(res.body).toMatch(/^aqven_database_up 1$/m);
    expect(res.body).toMatch(/^aqven_redactions_total\{kind="email"\} \d+$/m);
    expect((await get('/metrics?x=1', { host: `localhost:${port}` })).status).toBe(200);
  });

  it('through a proxy or for another host: only with a metrics token; an API token or none is 401 in the API shape', async () => {
    const away: Record<string, string>[] = [{ 'x-forwarded-for': '198.51.100.7' }, { forwarded: 'for=198.51.100.7' }, { host: 'rebound.example:9464' }];
    for (const h of away) {
      const refused = await get('/metrics', h);
      expect(refused.status, JSON.stringify(h)).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.parse(refused.body)).toEqual({ error: METRICS_AUTH, code: 'E_AUTH' });
      expect((await get('/metrics', { ...h, authorization: `Bearer ${tokens.api}` })).status).toBe(401);
      expect((await get('/metrics', { ...h, authorization: 'Bearer aqven_not-a-token' })).status).toBe(401);
      const read = await get('/metrics', { ...h, authorization: `Bearer ${tokens.metrics}` });
      expect(read.status).toBe(200);
      expect(read.body).toMatch(/^# TYPE aqven_runs_total counter$/m);
    }
  });

  it('answers nothing else: another path 404, another method 405', async () => {
    expect(await get('/')).toMatchObject({ status: 404, body: expect.stringContaining('"code":"E_NOT_FOUND"') });
    expect(await get('/api/runs')).toMatchObject({ status: 404 });
    expect(await get('/metrics', {}, 'POST')).toMatchObject({ status: 405, body: expect.stringContaining('"code":"E_METHOD"') });
  });
});

describe('aqven worker --metrics-port and --metrics-host', () => {
  // refused before the database is reached
  const env = { AQVEN_DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' };
  it('a port out of range, or a host without a port, is bad usage (exit 2)', async () => {
    expect(await aqvenHere(['worker', '--metrics-port', '70000'], env)).toMatchObject({
      code: 2,
      err: 'aqven worker: --metrics-port must be a whole number from 0 to 65535, got "70000"\n',
    });
    expect(await aqvenHere(['worker', '--metrics-host', '0.0.0.0'], env)).toMatchObject({ code: 2, err: 'aqven worker: --metrics-host needs --metrics-port\n' });
  });
});
