// The engine's own HTTP client against a real local server: what a try reads must be what fetch
// would have read (decoding, errors), and a connection is reused, not opened per call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWire } from './http-client';
import { readBodyText } from './sse';

const TEXT = JSON.stringify({ choices: [{ message: { content: '{"queue":"billing"}' } }], pad: 'é'.repeat(5000) });
let server: Server;
let base: string;
const sockets = new Set<unknown>();
let handler: (req: IncomingMessage, res: ServerResponse) => void = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    sockets.add(req.socket);
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const post = (path = '/v1/chat/completions', signal?: AbortSignal) =>
  postWire(`${base}${path}`, { headers: { 'content-type': 'application/json' }, body: '{"model":"m"}', signal });

describe('the engine HTTP client reads what fetch reads', () => {
  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('a %s body is decoded to the same text fetch gives', async (coding, encode) => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
      res.end(encode(Buffer.from(TEXT)));
    };
    const mine = await post();
    const { text } = await readBodyText(mine.body, 1 << 20, 'throw');
    const theirs = await (await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' })).text();
    expect(text).toBe(TEXT);
    expect(theirs).toBe(TEXT);
    expect(mine.headers.get('Content-Type')).toBe('application/json');
  });

  it('sends the request fetch sent: POST, the body, its length, the caller headers over the defaults', async () => {
    let seen: IncomingMessage | null = null;
    handler = (req, res) => {
      seen = req;
      res.end('{}');
    };
    const r = await postWire(`${base}/x`, { headers: { Accept: 'application/json', authorization: 'Bearer k' }, body: '{"a":"é"}' });
    await readBodyText(r.body, 1024, 'throw');
    expect(seen!.method).toBe('POST');
    expect(seen!.headers['content-length']).toBe(String(Buffer.byteLength('{"a":"é"}')));
    expect(seen!.headers.accept).toBe('application/json');
    expect(seen!.headers.authorization).toBe('Bearer k');
    expect(seen!.headers['accept-encoding']).toBe('gzip, deflate');
    // the headers go to node:http as a list, so the Host header is ours to add: once, as node:http would
    expect(seen!.rawHeaders.filter((_, i) => i % 2 === 0 && seen!.rawHeaders[i]!.toLowerCase() === 'host')).toEqual(['Host']);
    expect(seen!.headers.host).toBe(new URL(base).host);
    expect(seen!.headers.connection).toBe('keep-alive');
  });

  it("a caller's own Host and content-length headers are not doubled", async () => {
    let seen: IncomingMessage | null = null;
    handler = (req, res) => {
      seen = req;
      res.end('{}');
    };
    const r = await postWire(`${base}/x?q=1`, { headers: { Host: 'api.example.test', 'Content-Length': '999' }, body: '{}' });
    await readBodyText(r.body, 1024, 'throw');
    const names = seen!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.filter((n) => n === 'host')).toHaveLength(1);
    expect(names.filter((n) => n === 'content-length')).toHaveLength(1);
    expect(seen!.headers.host).toBe('api.example.test');
    expect(seen!.headers['content-length']).toBe('2');
    expect(seen!.url).toBe('/x?q=1');
  });

  it('keeps the connection: calls one after another go over one socket', async () => {
    handler = (_req, res) => res.end('{}');
    sockets.clear();
    for (let i = 0; i < 5; i++) {
      const r = await post();
      await readBodyText(r.body, 1024, 'throw');
    }
    expect(sockets.size).toBe(1);
  });

  it('a connection the server drops mid-body fails the read (a broken connection, not a short answer)', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"choices":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const r = await post();
    await expect(readBodyText(r.body, 1 << 20, 'throw')).rejects.toThrow();
  });

  it('a refused connection rejects as fetch does: `fetch failed`, the socket error as its cause', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await postWire(`http://127.0.0.1:${port}/`, { headers: {}, body: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('fetch failed');
    expect(((err as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('a URL with credentials is refused before anything is sent', async () => {
    let hit = false;
    handler = (_req, res) => {
      hit = true;
      res.end();
    };
    const url = `${base.replace('http://', 'http://user:secret@')}/v1`;
    await expect(postWire(url, { headers: {}, body: '' })).rejects.toThrow(/includes credentials/);
    expect(hit).toBe(false);
  });

  it("the caller's signal ends a body being read, with the signal's reason", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n'); // and nothing more
    };
    const ac = new AbortController();
    const r = await post('/stream', ac.signal);
    const reading = readBodyText(r.body, 1 << 20, 'throw');
    const why = new Error('stopped');
    setTimeout(() => ac.abort(why), 20);
    await expect(reading).rejects.toMatchObject({ cause: why });
  });
});
