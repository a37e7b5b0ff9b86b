// The simulator's routes (server.ts serves them): the base path of each dialect, which path is which
// dialect, and the plain HTTP of a request — its body read within a cap, its secrets left out of the log,
// a JSON reply, the dialect's words for a body that is not JSON.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_TYPE } from './render-common';
import type { RequestInfo } from './request-info';
import type { Dialect } from './types';

export const BASE_PATHS: Record<Dialect, string> = {
  openai: '/openai/v1',
  openrouter: '/openrouter/api/v1',
  anthropic: '/anthropic/v1',
  gemini: '/gemini/v1beta',
};

/** The base_url of `dialect` on the simulator at `url` (in this process or another: `aqven sim`, AQVEN_SIM_URL). */
export function simBaseUrl(url: string, dialect: Dialect): string {
  return url.replace(/\/+$/, '') + BASE_PATHS[dialect];
}

export const ROUTES = new Map<string, Dialect>([
  ['/openai/v1/chat/completions', 'openai'],
  ['/openrouter/api/v1/chat/completions', 'openrouter'],
  ['/anthropic/v1/messages', 'anthropic'],
]);
export const GENERATION_ROUTE = '/openrouter/api/v1/generation';
export const GEMINI_ROUTE = /^\/gemini\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'proxy-authorization', 'cookie']);
const MAX_BODY = 32 * 1024 * 1024;

export function cleanHeaders(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    if (SECRET_HEADERS.has(k)) continue;
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The query string without an API key (Gemini also accepts `?key=`). */
export function cleanQuery(q: string): string {
  if (q === '') return '';
  return q
    .split('&')
    .filter((kv) => !/^key=/i.test(kv))
    .join('&');
}

export function stubInfo(dialect: Dialect, model: string): RequestInfo {
  return { dialect, model, stream: false, includeUsage: false, geminiArray: false, schema: undefined, jsonMode: false, inputTokens: 0 };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export function badJsonMessage(d: Dialect): string {
  switch (d) {
    case 'openai':
      return "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";
    case 'openrouter':
      return 'Invalid JSON in request body';
    case 'anthropic':
      return 'There was an issue with your request body: it is not valid JSON.';
    case 'gemini':
      return 'Invalid JSON payload received. Unexpected token.';
  }
}

/** The request's body as text, or 413 past MAX_BODY. */
export function readBody(req: IncomingMessage, res: ServerResponse, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY) tooBig = true;
    else chunks.push(c);
  });
  req.on('end', () => {
    if (tooBig) return sendJson(res, 413, { error: { message: 'request body too large', code: 413 } });
    done(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  });
  req.on('error', () => res.socket?.destroy());
}
