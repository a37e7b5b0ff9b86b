// `aqven worker --metrics-port P`: the worker's own GET /metrics (DESIGN: Observability, "Metrics"),
// a plain node http server beside the worker — loopback unless `--metrics-host` says otherwise. A
// request from this machine reads it (its peer, as this server's socket sees it, and its Host both
// loopback, so a page elsewhere cannot read it through a rebound name); any other needs a metrics
// token (metrics-access.ts). A request that came through a proxy (a forwarding header) is never
// taken for this machine: the worker trusts no proxy.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@/db/types';
import { isLoopback } from '@/lib/shared/loopback';
import { requestPeer, stampFacts } from '@/lib/shared/peer';
import { metricsAccess, refusalAnswer } from './metrics-access';
import type { AqvenMetrics } from './metrics';

export const METRICS_PATH = '/metrics';
export const DEFAULT_METRICS_HOST = '127.0.0.1';

export interface MetricsServer {
  /** `http://host:port/metrics`, the port as bound */
  url: string;
  close(): Promise<void>;
}

const header = (req: IncomingMessage) => ({ get: (name: string) => (req.headers[name] === undefined ? null : String(req.headers[name])) });

/** The host name of a Host header (`[::1]:9464` → `[::1]`, `127.0.0.1:9464` → `127.0.0.1`). */
function hostName(host: string | undefined): string {
  const h = (host ?? '').trim();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0]!;
}

/** Whether the request is from this machine: a loopback peer this socket saw, no proxy header, a loopback Host. */
function fromThisMachine(req: IncomingMessage): boolean {
  const peer = requestPeer(stampFacts(req.socket.remoteAddress ?? '', header(req)), false);
  return peer.known && peer.loopback && isLoopback(hostName(req.headers.host));
}

function json(res: ServerResponse, status: number, error: string, code: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error, code }));
}

async function answer(req: IncomingMessage, res: ServerResponse, db: Db, metrics: AqvenMetrics, now: () => number): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== METRICS_PATH) return json(res, 404, `no such path: this server answers GET ${METRICS_PATH} only`, 'E_NOT_FOUND');
  if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, `GET ${METRICS_PATH} only`, 'E_METHOD');
  const access = await metricsAccess(db, { local: fromThisMachine(req), authorization: header(req).get('authorization'), address: null, now: now() });
  if (!access.ok) {
    const { body, headers } = refusalAnswer(access);
    res.writeHead(access.status, headers).end(body);
    return;
  }
  const { contentType, body } = await metrics.expose(db);
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
}

/** Serves `metrics` (the database's gauges read from `db`) on host:port; rejects when it cannot listen. */
export async function startMetricsServer(o: {
  host: string;
  port: number;
  db: Db;
  metrics: AqvenMetrics;
  now?: () => number;
  onError?: (err: unknown) => void;
}): Promise<MetricsServer> {
  const now = o.now ?? Date.now;
  const server: Server = createServer((req, res) => {
    answer(req, res, o.db, o.metrics, now).catch((err: unknown) => {
      o.onError?.(err);
      if (res.headersSent) res.destroy();
      else json(res, 500, 'the metrics could not be read', 'E_INTERNAL');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref(); // the worker's own life decides when the process ends
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') && !o.host.startsWith('[') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
