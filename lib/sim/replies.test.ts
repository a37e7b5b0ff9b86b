// What a picked step sends, without a socket (replies.ts), and the routes' plain helpers (routes.ts):
// a redirect's escaped Location, padding counted in content-length, a dropped body cut in half, a
// dropped stream kept to about half its content, secrets left out of the log.
import { describe, expect, it } from 'vitest';
import { answerFor } from './answer';
import { openaiRenderer } from './render-openai';
import { answerDelivery, bodyOptions, redirectReply, single } from './replies';
import type { RequestInfo } from './request-info';
import { cleanHeaders, cleanQuery, simBaseUrl } from './routes';

const info = (stream: boolean): RequestInfo => ({
  dialect: 'openai',
  model: 'm',
  stream,
  includeUsage: false,
  geminiArray: false,
  schema: undefined,
  jsonMode: false,
  inputTokens: 3,
});
const ctx = (stream: boolean) => ({ info: info(stream), seq: 1, tag: 'abcd1234', created: 0 });
const renderer = openaiRenderer('openai');

describe('replies', () => {
  it('escapes the Location in the redirect body and defaults to 307', () => {
    const r = redirectReply({ kind: 'redirect', location: 'http://x/?a=1&b="2"' });
    expect(r.status).toBe(307);
    expect(r.headers.location).toBe('http://x/?a=1&b="2"');
    expect(r.body).toContain('http://x/?a=1&#38;b=&#34;2&#34;');
  });

  it('counts the padding of a body in its content-length', () => {
    const d = bodyOptions(single({ status: 200, headers: {}, body: '{}' }, 0), { kind: 'ok', pad_bytes: 10 }, false);
    expect(d.headers['content-length']).toBe('12');
    expect(d.frames[0]!.pad).toEqual({ before: '', spaces: 10, after: '' });
  });

  it('drops half of a body after headers that promise all of it', () => {
    const step = { kind: 'drop', when: 'during_body' } as const;
    const d = answerDelivery(step, answerFor(info(false), step), renderer, ctx(false), undefined);
    const full = Number(d.headers['content-length']);
    expect(d.end).toBe('drop');
    expect(d.frames[0]!.data.length).toBe(Math.max(1, Math.floor(full / 2)));
  });

  it('keeps a dropped stream to about half of its content deltas', () => {
    const step = { kind: 'drop', when: 'mid_stream' } as const;
    const d = answerDelivery(step, answerFor(info(true), step), renderer, ctx(true), undefined);
    expect(d.end).toBe('drop');
    expect(d.keep).toBeGreaterThan(0);
    expect(d.keep).toBeLessThan(d.frames.length);
  });
});

describe('routes', () => {
  it('leaves keys out of the logged headers and query', () => {
    expect(cleanHeaders({ authorization: 'Bearer k', 'x-api-key': 'k', accept: 'a', 'x-two': ['1', '2'] })).toEqual({ accept: 'a', 'x-two': '1, 2' });
    expect(cleanQuery('alt=sse&key=SECRET&Key=x')).toBe('alt=sse');
  });

  it('puts a dialect base path under the simulator URL', () => {
    expect(simBaseUrl('http://127.0.0.1:9/', 'openrouter')).toBe('http://127.0.0.1:9/openrouter/api/v1');
  });
});
