// The simulator as a server: routing, scripts per model, control API, request log, dropped and
// stalled connections, latency and seeded chaos.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type ChaosProfile, type Dialect, type SimServer } from './index';
import { call, readSse, requestFor } from '@/test/helpers/sim-test-client';

let sim: SimServer;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

/** The error a failed fetch / body read raised, with its cause chain flattened. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const parts: string[] = [];
    type Cause = { name?: string; code?: string; message?: string; cause?: unknown } | undefined;
    for (let e = err as Cause; e; e = e.cause as Cause) parts.push(`${e.name}:${e.code ?? ''}:${e.message}`);
    return parts.join(' <- ');
  }
  throw new Error('expected a failure');
}

const SOCKET_ERROR = /UND_ERR_SOCKET|ECONNRESET|other side closed|terminated/;

describe('routes', () => {
  it('baseUrl per dialect', () => {
    expect(sim.baseUrl('openai')).toBe(`${sim.url}/openai/v1`);
    expect(sim.baseUrl('openrouter')).toBe(`${sim.url}/openrouter/api/v1`);
    expect(sim.baseUrl('anthropic')).toBe(`${sim.url}/anthropic/v1`);
    expect(sim.baseUrl('gemini')).toBe(`${sim.url}/gemini/v1beta`);
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
  });

  it('unknown routes and methods → 404 JSON', async () => {
    const a = await fetch(`${sim.url}/nope`);
    expect(a.status).toBe(404);
    expect((await a.json()).error.message).toContain('/nope');
    const b = await fetch(`${sim.baseUrl('openai')}/chat/completions`);
    expect(b.status).toBe(404);
    expect((await b.json()).error).toHaveProperty('type');
    const c = await fetch(`${sim.baseUrl('gemini')}/models/x:countTokens`, { method: 'POST', body: '{}' });
    expect((await c.json()).error.status).toBe('NOT_FOUND');
  });
});

describe('scripts', () => {
  it('one step per request per model, the last repeats; "*" is the default; others answer ok', async () => {
    sim.loadScripts({
      'gpt-a': [
        { kind: 'status', status: 500 },
        { kind: 'ok', text: 'A' },
      ],
      '*': [{ kind: 'ok', text: 'star' }, { kind: 'refusal' }],
    });
    const statuses: (number | string)[] = [];
    for (const model of ['gpt-a', 'gpt-a', 'gpt-a', 'gpt-b', 'gpt-c', 'gpt-b', 'gpt-b']) {
      const res = await call(sim, 'openai', { model });
      const body = await res.json();
      statuses.push(res.status === 200 ? (body.choices[0].message.content ?? 'refused') : res.status);
    }
    expect(statuses).toEqual([500, 'A', 'A', 'star', 'star', 'refused', 'refused']);
    expect(sim.requests().map((r) => r.stepIndex)).toEqual([0, 1, 1, 0, 0, 1, 1]);
    sim.loadScripts({ other: [{ kind: 'refusal' }] }); // replaces: gpt-a is back to ok
    expect((await (await call(sim, 'openai', { model: 'gpt-a' })).json()).choices[0].message.content).toMatch(/^Lorem/);
  });

  it('invalid scripts are rejected with the path of the problem', () => {
    expect(() => sim.loadScripts({ m: [{ kind: 'explode' } as never] })).toThrow(/scripts\["m"\]\[0\]\.kind/);
    expect(() => sim.loadScripts({ m: [{ kind: 'status' } as never] })).toThrow(/status/);
  });
});

describe('control API over HTTP', () => {
  it('POST /_sim/scripts, /_sim/chaos, GET /_sim/requests, POST /_sim/reset', async () => {
    const post = (path: string, body: unknown) => fetch(sim.url + path, { method: 'POST', body: JSON.stringify(body) });
    expect((await post('/_sim/scripts', { '*': [{ kind: 'status', status: 418 }] })).status).toBe(200);
    expect((await call(sim, 'openai')).status).toBe(418);
    const bad = await post('/_sim/scripts', { '*': [{ kind: 'nope' }] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('kind');
    expect((await post('/_sim/chaos', { seed: 1, rate_limit: 2 })).status).toBe(400);
    expect((await post('/_sim/chaos', null)).status).toBe(200);
    const log = await (await fetch(`${sim.url}/_sim/requests`)).json();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ seq: 1, method: 'POST', dialect: 'openai', step: 'status' });
    expect((await post('/_sim/reset', {})).status).toBe(200);
    expect(await (await fetch(`${sim.url}/_sim/requests`)).json()).toEqual([]);
    expect((await call(sim, 'openai')).status).toBe(200); // scripts cleared
  });
});

describe('request log', () => {
  it('records each request with its parsed body and step, without secret headers or ?key=', async () => {
    sim.loadScripts({ 'claude-sonnet-4-5': [{ kind: 'truncated' }] });
    for (const d of ['openai', 'anthropic', 'gemini'] as Dialect[]) await (await call(sim, d, { stream: d === 'gemini' })).text();
    await fetch(`${sim.baseUrl('gemini')}/models/g:generateContent?key=AIza-in-url&alt=json`, { method: 'POST', body: JSON.stringify({ contents: [] }) });
    const log = sim.requests();
    expect(log.map((r) => [r.dialect, r.model, r.stream, r.step])).toEqual([
      ['openai', 'gpt-4o-mini', false, 'ok'],
      ['anthropic', 'claude-sonnet-4-5', false, 'truncated'],
      ['gemini', 'gemini-2.5-flash', true, 'ok'],
      ['gemini', 'g', false, 'ok'],
    ]);
    expect(log[2]).toMatchObject({ path: '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: 'alt=sse' });
    expect(log[3].query).toBe('alt=json');
    expect((log[0].body as { messages: unknown[] }).messages).toHaveLength(2);
    expect(log[1].headers['anthropic-version']).toBe('2023-06-01');
    expect(log.every((r) => typeof r.arrivedAt === 'number' && r.arrivedAt <= Date.now())).toBe(true);
    const dump = JSON.stringify(log);
    for (const secret of ['sk-secret-openai', 'sk-ant-secret', 'AIza-secret', 'AIza-in-url']) expect(dump).not.toContain(secret);
    for (const h of ['authorization', 'x-api-key', 'x-goog-api-key']) expect(log.some((r) => h in r.headers)).toBe(false);
  });
});

describe('dropped connections', () => {
  it('before: fetch rejects with a socket error, no HTTP status', async () => {
    sim.loadScripts({ '*': [{ kind: 'drop' }] });
    expect(await failure(call(sim, 'openai'))).toMatch(SOCKET_ERROR);
  });

  it('during_body: headers arrive, then the body read fails', async () => {
    sim.loadScripts({ '*': [{ kind: 'drop', when: 'during_body' }] });
    const res = await call(sim, 'anthropic');
    expect(res.status).toBe(200);
    expect(await failure(res.text())).toMatch(SOCKET_ERROR);
  });

  it.each(['openai', 'openrouter', 'anthropic', 'gemini'] as Dialect[])('mid_stream (%s): some events, then a socket error, not a clean end', async (dialect) => {
    sim.loadScripts({ '*': [{ kind: 'drop', when: 'mid_stream' }] });
    const res = await call(sim, dialect, { stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let received = '';
    const err = await failure(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received += new TextDecoder().decode(value);
        }
      })(),
    );
    expect(err).toMatch(SOCKET_ERROR);
    expect(received).toMatch(/data: /);
    expect(received).not.toContain('[DONE]');
    expect(received).not.toContain('message_stop');
  });
});

describe('stalls and close()', () => {
  it('stall: headers (and for streams one event), then silence until the client gives up', async () => {
    sim.loadScripts({ '*': [{ kind: 'stall' }] });
    const res = await call(sim, 'openai');
    expect(res.status).toBe(200);
    const t0 = Date.now();
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 150);
    const stream = await fetch(sim.baseUrl('anthropic') + '/messages', {
      method: 'POST',
      signal: ctl.signal,
      headers: { 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: message_start');
    expect(await failure(reader.read())).toMatch(/Abort/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    void res.body?.cancel();
  });

  it('close() ends stalled connections promptly', async () => {
    const own = await startSimulator({ scripts: { '*': [{ kind: 'stall' }] } });
    const res = await call(own, 'gemini', { stream: true });
    const pending = res.text();
    const t0 = Date.now();
    await own.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await failure(pending)).toMatch(SOCKET_ERROR);
  });
});

describe('latency', () => {
  it('first_token_ms delays the response; tokens_per_s paces stream chunks', async () => {
    sim.loadScripts({
      '*': [
        { kind: 'ok', latency: { first_token_ms: 120 } },
        { kind: 'ok', text: 'x'.repeat(160), latency: { tokens_per_s: 400 } },
      ],
    });
    let t0 = performance.now();
    await (await call(sim, 'openai')).json();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(115);
    t0 = performance.now();
    const stamps: number[] = [];
    const reader = (await call(sim, 'openai', { stream: true })).body!.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      stamps.push(performance.now() - t0);
    }
    // 40 output tokens at 400 tokens/s ≈ 100 ms, spread over several writes
    expect(stamps.at(-1)!).toBeGreaterThanOrEqual(80);
    expect(stamps.length).toBeGreaterThan(3);
  });

  it('server default latency applies when the step has none', async () => {
    const own = await startSimulator({ latency: { first_token_ms: 80 } });
    const t0 = performance.now();
    await (await call(own, 'gemini')).json();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(75);
    await own.close();
  });
});

describe('chaos', () => {
  const PROFILE: ChaosProfile = { seed: 7, rate_limit: 0.15, server_error: 0.1, drop: 0.1, provider_error: 0.1, refusal: 0.1, truncated: 0.1, invalid: 0.1 };

  async function run(profile: ChaosProfile, n = 30): Promise<string[]> {
    sim.reset();
    sim.setChaos(profile);
    for (let i = 0; i < n; i++) {
      try {
        await (await call(sim, 'openai')).text();
      } catch {
        // dropped connections are part of the sequence
      }
    }
    return sim.requests().map((r) => `${r.step}:${r.fault ?? ''}`);
  }

  it('the same seed gives the same step sequence; another seed a different one', async () => {
    const a = await run(PROFILE);
    const b = await run(PROFILE);
    expect(b).toEqual(a);
    expect(new Set(a).size).toBeGreaterThan(4);
    expect(a).toContain('chaos_ok:');
    const c = await run({ ...PROFILE, seed: 8 });
    expect(c).not.toEqual(a);
  });

  it('faults map to real wire failures: rate_limit is a 429 with retry-after 1', async () => {
    sim.setChaos({ seed: 3, rate_limit: 1 });
    const res = await call(sim, 'openai');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    const gem = await (await call(sim, 'gemini')).json();
    expect(gem.error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' });
    expect(sim.requests().map((r) => r.fault)).toEqual(['rate_limit', 'rate_limit']);
  });

  it('scripts take precedence over chaos for a scripted model', async () => {
    sim.setChaos({ seed: 1, server_error: 1 });
    sim.loadScripts({ scripted: [{ kind: 'ok', text: 'fine' }] });
    expect((await call(sim, 'openai', { model: 'scripted' })).status).toBe(200);
    expect((await call(sim, 'openai', { model: 'other' })).status).toBeGreaterThanOrEqual(500);
  });

  it('streams under chaos still parse as SSE', async () => {
    sim.setChaos({ seed: 11, refusal: 0.5, truncated: 0.5 });
    for (let i = 0; i < 4; i++) {
      const { events } = await readSse(await call(sim, 'openrouter', { stream: true }));
      expect(events.at(-1)!.data).toBe('[DONE]');
    }
  });
});

describe('redirect, keepalive and body options (gzip, pad_bytes)', () => {
  it('redirect: the status (default 307) with its Location, logged as step redirect', async () => {
    sim.loadScripts({
      'gpt-r': [
        { kind: 'redirect', location: 'https://elsewhere.example/v1/chat/completions' },
        { kind: 'redirect', status: 301, location: '/v2' },
      ],
    });
    const { path, body } = requestFor('openai', { model: 'gpt-r' });
    const send = () => fetch(sim.baseUrl('openai') + path, { method: 'POST', body: JSON.stringify(body), redirect: 'manual' });
    const a = await send();
    expect(a.status).toBe(307);
    expect(a.headers.get('location')).toBe('https://elsewhere.example/v1/chat/completions');
    expect(await a.text()).toContain('Moved');
    const b = await send();
    expect([b.status, b.headers.get('location')]).toEqual([301, '/v2']);
    expect(sim.requests().map((r) => r.step)).toEqual(['redirect', 'redirect']);
  });

  it.each([
    ['openai', ': keepalive'],
    ['openrouter', ': keepalive'],
    ['anthropic', 'event: ping'],
    ['gemini', ': keepalive'],
  ] as const)('keepalive over %s: the opening events, then %j again and again, never content', async (dialect, ka) => {
    sim.loadScripts({ '*': [{ kind: 'keepalive', every_ms: 2 }] });
    const res = await call(sim, dialect, { stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (text.split(ka).length <= 4) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).not.toMatch(/text_delta|"content":"[^"]|"text":"[^"]|\[DONE\]|message_stop|finishReason/);
  });

  it('keepalive on a body request: 200, then a space now and then, and no body', async () => {
    sim.loadScripts({ '*': [{ kind: 'keepalive', every_ms: 2 }] });
    const res = await call(sim, 'openai');
    const reader = res.body!.getReader();
    let text = '';
    while (text.length < 3) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text.trim()).toBe('');
  });

  it('gzip + pad_bytes: content-encoding gzip, the padded body inflates to pad + body, and still parses', async () => {
    sim.loadScripts({ '*': [{ kind: 'ok', text: 'padded', gzip: true, pad_bytes: 3 * 1024 * 1024 }] });
    const res = await call(sim, 'openai');
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const text = await res.text(); // fetch inflates
    expect(text.length).toBeGreaterThan(3 * 1024 * 1024);
    expect(text.slice(0, 3 * 1024 * 1024).trim()).toBe('');
    expect(JSON.parse(text).choices[0].message.content).toBe('padded');
  });

  it('pad_bytes on a stream is one SSE comment line before the events; content-length matches on a plain body', async () => {
    sim.loadScripts({ '*': [{ kind: 'ok', text: 'x', pad_bytes: 1000 }] });
    const { events, comments } = await readSse(await call(sim, 'anthropic', { stream: true }));
    expect(comments[0]!.trim()).toBe('');
    expect(comments[0]!.length).toBeGreaterThanOrEqual(999); // the parser drops the space after ':'
    expect(events.at(-1)!.event).toBe('message_stop');
    const plain = await call(sim, 'anthropic');
    const body = await plain.text();
    expect(Number(plain.headers.get('content-length'))).toBe(Buffer.byteLength(body));
    expect(JSON.parse(body).content[0].text).toBe('x');
  });

  it('a redirect step without a location, or a pad beyond 16 GiB, is refused', () => {
    expect(() => sim.loadScripts({ '*': [{ kind: 'redirect' } as never] })).toThrow(/location/);
    expect(() => sim.loadScripts({ '*': [{ kind: 'ok', pad_bytes: 2 ** 40 }] })).toThrow(/pad_bytes/);
  });
});
