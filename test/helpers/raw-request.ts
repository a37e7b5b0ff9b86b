// One HTTP request over node:http to a server on loopback, its headers sent as given (a repeated or
// forged header, which fetch would merge or refuse): the tests of `aqven serve` (test/cli/serve-command
// and the browser spec e2e/serve.spec.ts) check what it does with them.
import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends METHOD PATH to 127.0.0.1:PORT; a `body` goes as JSON. Resolves with the whole answer. */
export function rawRequest(port: number, path: string, o: { method?: string; headers?: Record<string, string | string[]>; body?: unknown } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = o.body === undefined ? o.headers : { 'content-type': 'application/json', ...o.headers };
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end(o.body === undefined ? undefined : JSON.stringify(o.body));
  });
}
