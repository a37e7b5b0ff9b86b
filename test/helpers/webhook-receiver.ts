// A webhook on loopback, as a chat service or an on-call tool runs one: a real http server that
// keeps every request's path and JSON body and answers with the statuses a test gives, in order
// (the last repeated; 200 when none given).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  contentType: string | undefined;
  body: unknown;
}

export interface WebhookReceiver {
  /** its URL, with a path standing for the secret part of a real webhook's */
  url: string;
  received: Received[];
  /** the statuses of the next requests, in order; the last repeats */
  answer(...statuses: number[]): void;
  close(): Promise<void>;
}

export const WEBHOOK_SECRET_PATH = '/services/T000/B000/s3cr3tT0kenOfTheHook';

export async function webhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  let statuses: number[] = [200];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body });
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'upstream_unavailable');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${WEBHOOK_SECRET_PATH}`,
    received,
    answer: (...s) => void (statuses = s.length ? s : [200]),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
