// The engine's own HTTP/1.1 client for a provider call (DESIGN: One model call): one POST over
// node:http / node:https on keep-alive connections, its body read as decompressed chunks. It does
// what `fetch` did for a try — the same default request headers, gzip/deflate/br decoded the way
// undici decodes them, no redirect followed, a URL with credentials refused, the caller's signal
// ending it — at about a quarter of fetch's CPU per call (bench/call-cpu.bench.ts): undici's
// Request, Response and web streams were most of the engine's own cost. A caller that hands the
// engine a `fetch` (CallNodeDeps.fetch) still gets it.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import { constants, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { HeaderReader } from './retry-after';

/** A body being read: `read()` gives the next decompressed chunk (null at its end) or throws when the exchange broke. */
export interface WireBody {
  read(): Promise<Uint8Array | null>;
  /** stops reading and frees the connection */
  cancel(): void;
}

export interface WireReply {
  status: number;
  headers: HeaderReader;
  body: WireBody | ReadableStream<Uint8Array> | null;
}

// keep-alive pools, as fetch keeps its connections; idle sockets close after 5 s (Node's own default agent's)
const agents = { http: new HttpAgent({ keepAlive: true, timeout: 5_000 }), https: new HttpsAgent({ keepAlive: true, timeout: 5_000 }) };

/** The headers of a reply: a repeated header joined with ", ", as fetch's Headers gives it. */
function headerReader(res: IncomingMessage): HeaderReader {
  return {
    get: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** The decoders of a content-encoding, outermost last (undici's rule: an unknown coding leaves the body as it came). */
function decoders(encoding: string | undefined): Readable[] {
  if (!encoding) return [];
  const out: Readable[] = [];
  for (const coding of encoding.toLowerCase().split(',').reverse()) {
    const c = coding.trim();
    if (c === 'gzip' || c === 'x-gzip') out.push(createGunzip({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH }));
    else if (c === 'deflate') out.push(createInflate({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH }));
    else if (c === 'br') out.push(createBrotliDecompress({ flush: constants.BROTLI_OPERATION_FLUSH, finishFlush: constants.BROTLI_OPERATION_FLUSH }));
    else if (c !== 'identity' && c !== '') return [];
  }
  return out;
}

/** The body of `res`, decoded, read on demand (a gzip bomb inflates only as far as it is read). */
function bodyOf(req: ClientRequest, res: IncomingMessage, signal: AbortSignal | undefined): WireBody {
  let error: unknown = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const fail = (err: unknown) => {
    error ??= err;
    poke();
  };
  const decode = decoders(res.headers['content-encoding'] as string | undefined);
  const src = decode.length ? (pipeline([res, ...decode], (err) => err && fail(err)) as unknown as Readable) : res;
  src.on('readable', poke);
  src.on('end', () => {
    ended = true;
    poke();
  });
  src.on('error', fail);
  res.on('error', fail);
  // the connection closed before the body's end: the exchange broke (IncomingMessage may not say so by an error)
  res.on('close', () => !res.complete && fail(Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' })));
  const stop = () => {
    src.destroy();
    res.destroy();
    req.destroy();
  };
  const onAbort = () => {
    fail(signal!.reason);
    stop();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const finish = () => signal?.removeEventListener('abort', onAbort);
  return {
    read: async () => {
      for (;;) {
        if (error !== null) {
          finish();
          // fetch's shape: `terminated`, the socket's or decoder's own words as its cause
          throw signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error });
        }
        const chunk = src.read() as Buffer | null;
        if (chunk !== null) return chunk;
        if (ended) {
          finish();
          return null;
        }
        await new Promise<void>((r) => (wake = r));
      }
    },
    cancel: () => {
      finish();
      if (!ended) stop();
    },
  };
}

/** A URL postWire may send to, parsed once: its request options and the Host header node:http would add. */
type Target = { secure: boolean; options: ReturnType<typeof urlToHttpOptions>; host: string };

/** parsed targets by URL text: a process calls a handful of provider URLs, again and again */
const targets = new Map<string, Target>();
const MAX_TARGETS = 256;

/** The target of `url`, or the TypeError fetch would reject it with (nothing is sent). */
function targetOf(url: string): Target | TypeError {
  const known = targets.get(url);
  if (known) return known;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return new TypeError(`Failed to parse URL from ${url}`);
  }
  if (u.username || u.password) return new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url}`);
  const secure = u.protocol === 'https:';
  if (!secure && u.protocol !== 'http:') return new TypeError('fetch failed', { cause: new Error('unknown scheme') });
  // the URL's host leaves the port out when it is the scheme's own, as node:http's Host header does
  const t: Target = { secure, options: urlToHttpOptions(u), host: u.host };
  if (targets.size >= MAX_TARGETS) targets.clear();
  targets.set(url, t);
  return t;
}

/**
 * POSTs `body` to `url` and resolves once the status and headers are in; rejects as fetch would:
 * a TypeError for a URL that cannot be parsed or carries credentials (nothing is sent), the
 * signal's reason when it aborts, the connection's error (`fetch failed`, its cause the socket's).
 */
export function postWire(url: string, init: { headers: Record<string, string>; body: string; signal?: AbortSignal }): Promise<WireReply> {
  const target = targetOf(url);
  if (target instanceof TypeError) return Promise.reject(target);
  const { secure } = target;
  const { signal } = init;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const payload = Buffer.from(init.body, 'utf8');
  // what fetch adds when the caller did not set it
  const byName: Record<string, string> = {
    accept: '*/*',
    'accept-language': '*',
    'sec-fetch-mode': 'cors',
    'user-agent': 'node',
    'accept-encoding': secure ? 'br, gzip, deflate' : 'gzip, deflate',
  };
  for (const k of Object.keys(init.headers)) byName[k.toLowerCase()] = init.headers[k]!;
  // handed to node:http as a flat list, written as they are (each name and value still checked), not
  // set one by one: the same request on the wire at less CPU; the Host header is then ours to add
  const headers: string[] = [];
  for (const k in byName) if (k !== 'content-length') headers.push(k, byName[k]!);
  headers.push('content-length', String(payload.byteLength));
  if (byName.host === undefined) headers.push('Host', target.host);
  return new Promise((resolve, reject) => {
    const send = secure ? httpsRequest : httpRequest;
    const req = send({ ...target.options, method: 'POST', headers, agent: secure ? agents.https : agents.http });
    let answered = false;
    const onAbort = () => {
      if (answered) return;
      req.destroy();
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    req.on('error', (err) => {
      if (answered) return; // the body reader reports it
      done();
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: err }));
    });
    req.on('response', (res) => {
      answered = true;
      done();
      resolve({ status: res.statusCode ?? 0, headers: headerReader(res), body: bodyOf(req, res, signal) });
    });
    req.end(payload);
  });
}
