// Hardening of the transport (DESIGN: Limits), over the real simulator: redirects are never followed,
// credentials never reach a stored message, every wait and every size is bounded. The watchdog runs
// on real timers by design (lib/engine/README.md), so the timeout tests use short real limits and
// assert on what was recorded, never on how long anything took.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSimulator } from '@/lib/sim';
import type { SimServer } from '@/lib/sim/types';
import { ANTHROPIC, DIALECTS, GEMINI, harness, node, OPENAI, simProviders, type DialectCase } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
let elsewhere: SimServer;
beforeAll(async () => {
  h = await harness();
  elsewhere = await startSimulator({});
});
afterAll(async () => {
  await h.close();
  await elsewhere.close();
});
beforeEach(() => {
  h.fresh();
  elsewhere.reset();
});

/** The URL the engine posts a non-stream request of `c` to, on `sim`. */
function endpoint(sim: SimServer, c: DialectCase): string {
  if (c.dialect === 'gemini') return `${sim.baseUrl('gemini')}/models/${c.modelId}:generateContent`;
  return `${sim.baseUrl(c.dialect)}/${c.dialect === 'anthropic' ? 'messages' : 'chat/completions'}`;
}

const KEY = 'sk-live-0123456789abcdefghij'; // 28 characters

describe.each(DIALECTS)('redirects over $dialect', (c) => {
  it.each([307, 308, 302])('a %i is not followed: the other host gets nothing, the attempt is a client_error naming the origin', async (status) => {
    h.script({ [c.modelId]: [{ kind: 'redirect', status, location: endpoint(elsewhere, c) }] });
    const res = await h.run(node([c.model]), { env: { [`${c.provider.toUpperCase()}_API_KEY`]: KEY } });
    expect(elsewhere.requests()).toEqual([]); // no key, no prompt went there
    expect(h.requests(c.modelId)).toHaveLength(1); // not retried, not resent by on_error: retry
    expect(res.status).toBe('failed');
    const a = res.attempts[0]!;
    expect(a.error?.kind).toBe('client_error');
    expect(a.error?.message).toContain(`answered HTTP ${status} to ${h.sim.url} (to ${elsewhere.url})`);
    expect(a.error?.message).toContain('set base_url to the final URL');
    expect(a.error?.message).toContain('redirected the request');
    expect(a.tries.map((t) => [t.status, t.error])).toEqual([[status, 'client_error']]);
  });
});

describe('error text is scrubbed before it is cut', () => {
  it('a key straddling the 200-character excerpt of a text body leaves no prefix of itself', async () => {
    // the key starts at character 190 of the excerpt: the old cut kept its first 10 characters
    const body = `${'x'.repeat(189)} ${KEY} and more text after it`;
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 400, body }] });
    const res = await h.run(node([OPENAI.model]), { env: { OPENAI_API_KEY: KEY } });
    const stored = JSON.stringify([res, h.events]);
    expect(stored).not.toContain(KEY.slice(0, 8));
    const message = res.attempts[0]!.error!.message;
    expect(message).toMatch(/HTTP 400: x{189} <API/); // cut inside the marker at most
  });

  it('a provider message that echoes a truncated key ends in <API_KEY>, not in the prefix', async () => {
    // a message longer than the message limit, whose cut falls inside an echoed key
    const message = `${'m'.repeat(995)}${KEY}`;
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 401, body: { error: { message } } }] });
    const res = await h.run(node([OPENAI.model]), { env: { OPENAI_API_KEY: KEY } });
    expect(JSON.stringify(res)).not.toContain(KEY.slice(0, 8));
  });

  it('an error body cut at its read limit (64 KiB) keeps no prefix of a key straddling the cut', async () => {
    const body = `${'y'.repeat(64 * 1024 - 12)}${KEY}`; // the cut leaves 12 characters of the key
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 400, body }] });
    const res = await h.run(node([OPENAI.model]), { env: { OPENAI_API_KEY: KEY } });
    expect(res.attempts[0]!.error!.detail!.length).toBeLessThanOrEqual(64 * 1024);
    expect(JSON.stringify([res, h.events])).not.toContain(KEY.slice(0, 8));
  });

  it('a key whose digits look like a card number is scrubbed whole, before the detectors could rewrite part of it', async () => {
    const key = 'sk-4111111111111111-abcdefgh'; // a Luhn-valid card number inside
    h.script({ [OPENAI.modelId]: [{ kind: 'status', status: 401, body: `bad key ${key}` }] });
    const res = await h.run(node([OPENAI.model]), { env: { OPENAI_API_KEY: key } });
    expect(res.attempts[0]!.error!.message).toContain('bad key <API_KEY>');
    expect(res.attempts[0]!.error!.detail).toBe('bad key <API_KEY>');
    expect(JSON.stringify([res, h.events])).not.toContain('abcdefgh');
  });

  it('an HTML 502 reads "HTTP 502: <html>…" once, not "HTTP 502: HTTP 502: …"', async () => {
    h.script({ [ANTHROPIC.modelId]: [{ kind: 'status', status: 502, variant: 'html' }] });
    const res = await h.run(node([ANTHROPIC.model], { policy: { onError: 'fail' } }));
    const message = res.attempts[0]!.error!.message;
    expect(message).toContain('HTTP 502: <html> <head><title>502 Bad Gateway</title>');
    expect(message).not.toMatch(/HTTP 502: HTTP 502/);
  });
});

describe('AQVEN_PROVIDER_HOSTS', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each(DIALECTS)('a $dialect host outside the list gets nothing: one client_error try, not resent, the node goes on to fail', async (c) => {
    vi.stubEnv('AQVEN_PROVIDER_HOSTS', 'api.example.com, *.openai.com');
    const res = await h.run(node([c.model]), { env: { [`${c.provider.toUpperCase()}_API_KEY`]: KEY } });
    expect(h.requests()).toEqual([]); // no key, no prompt left the process
    expect(res.status).toBe('failed');
    expect(res.attempts).toHaveLength(1); // on_error: retry does not resend it
    const a = res.attempts[0]!;
    expect(a.error?.kind).toBe('client_error');
    expect(a.error?.message).toContain(
      `${c.model} was not sent the request: the host 127.0.0.1 of provider "${c.provider}" (its base_url) is not in AQVEN_PROVIDER_HOSTS (api.example.com, *.openai.com), the only hosts a request may go to`,
    );
    expect(a.tries).toMatchObject([{ tryNo: 1, status: null, error: 'client_error' }]);
  });

  it('a refused host is an error the policy answers: the fallback on a listed host answers', async () => {
    vi.stubEnv('AQVEN_PROVIDER_HOSTS', 'localhost');
    const providers = simProviders(h.sim);
    providers.anthropic!.baseUrl = elsewhere.baseUrl('anthropic').replace('127.0.0.1', 'localhost');
    elsewhere.loadScripts({ [ANTHROPIC.modelId]: [{ kind: 'ok', json: { queue: 'tech', confidence: 0.9 } }] });
    const res = await h.run(node([OPENAI.model, ANTHROPIC.model], { policy: { onError: 'fallback' } }), { providers });
    expect(h.requests()).toEqual([]);
    expect(elsewhere.requests()).toHaveLength(1);
    expect(res.status).toBe('succeeded');
    expect(res.attempts.map((a) => [a.model, a.error?.kind ?? null])).toEqual([
      [OPENAI.model, 'client_error'],
      [ANTHROPIC.model, null],
    ]);
  });

  it('a listed host is sent to as before; unset or blank, any host is', async () => {
    for (const list of ['127.0.0.1', ' api.example.com ,127.0.0.1 ', '']) {
      vi.stubEnv('AQVEN_PROVIDER_HOSTS', list);
      h.script({ [GEMINI.modelId]: [{ kind: 'ok', text: 'hi' }] });
      expect((await h.run(node([GEMINI.model]))).status).toBe('succeeded');
    }
    vi.unstubAllEnvs();
    delete process.env.AQVEN_PROVIDER_HOSTS;
    h.script({ [GEMINI.modelId]: [{ kind: 'ok', text: 'hi' }] });
    expect((await h.run(node([GEMINI.model]))).status).toBe('succeeded');
    expect(h.requests(GEMINI.modelId)).toHaveLength(4);
  });
});

describe('credentials in base_url', () => {
  it('a base_url with user:secret@ is a configuration error: not retried, and the secret is in no message', async () => {
    const providers = simProviders(h.sim);
    providers.openai!.baseUrl = h.sim.baseUrl('openai').replace('http://', 'http://admin:s3cr3t-pass@');
    const res = await h.run(node([OPENAI.model]), { providers });
    expect(h.requests()).toEqual([]);
    const a = res.attempts[0]!;
    expect(a.error?.kind).toBe('client_error');
    expect(a.tries).toHaveLength(1);
    expect(a.error?.message).toContain('the request could not be sent');
    expect(a.error?.message).toContain('http://<credentials>@127.0.0.1');
    expect(JSON.stringify([res, h.events])).not.toContain('s3cr3t-pass');
  });

  it('a network error message quoting a URL with the key in it is scrubbed of the key', async () => {
    const providers = simProviders(h.sim);
    providers.openai!.baseUrl = `http://[::1/${KEY}`; // unparseable: the runtime quotes it whole
    const res = await h.run(node([OPENAI.model]), { providers, env: { OPENAI_API_KEY: KEY } });
    expect(res.attempts[0]!.error?.message).toContain('<API_KEY>');
    expect(JSON.stringify([res, h.events])).not.toContain(KEY.slice(0, 8));
  });
});

describe.each(DIALECTS)('keep-alive streams over $dialect', (c) => {
  it('a stream that sends only keep-alives ends at transport.idle_timeout, though each keep-alive resets transport.timeout', async () => {
    h.script({ [c.modelId]: [{ kind: 'keepalive', every_ms: 5 }] });
    const res = await h.run(node([c.model], { stream: true, policy: { onError: 'fail' } }), {
      providerOverrides: { transport: { maxAttempts: 1, timeoutMs: 60_000, idleTimeoutMs: 150 } },
    });
    expect(res.status).toBe('failed');
    const a = res.attempts[0]!;
    expect(a.tries.map((t) => [t.status, t.error])).toEqual([[200, 'timeout']]);
    expect(a.error?.message).toContain('transport.idle_timeout (150 ms)');
    expect(a.usageUnknown).toBe(true); // a 2xx reply cut short: its tokens may have been billed
  });

  it('content that keeps coming resets the idle timer: a stream longer than idle_timeout completes', async () => {
    // about 14 content events, 30 ms apart: 0.4 s in all, never 150 ms without content
    const text = 'The quick brown fox jumps over the lazy dog and keeps running on and on and on.'.repeat(c.dialect === 'gemini' ? 8 : 2);
    const tokensPerEvent = c.dialect === 'gemini' ? 12 : 3;
    h.script({ [c.modelId]: [{ kind: 'ok', text, latency: { tokens_per_s: tokensPerEvent / 0.03 } }] });
    const res = await h.run(node([c.model], { stream: true }), {
      providerOverrides: { transport: { maxAttempts: 1, timeoutMs: 60_000, idleTimeoutMs: 150 } },
    });
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe(text);
  });

  it('a stream whose content never stops ends at transport.try_deadline', async () => {
    const text = 'Lorem ipsum dolor sit amet. '.repeat(40);
    h.script({ [c.modelId]: [{ kind: 'ok', text, latency: { tokens_per_s: 100 } }] }); // ~3 s of content
    const res = await h.run(node([c.model], { stream: true, policy: { onError: 'fail' } }), {
      providerOverrides: { transport: { maxAttempts: 1, timeoutMs: 60_000, idleTimeoutMs: 60_000, tryDeadlineMs: 200 } },
    });
    expect(res.status).toBe('failed');
    const a = res.attempts[0]!;
    expect(a.tries.map((t) => t.error)).toEqual(['timeout']);
    expect(a.error?.message).toContain('transport.try_deadline (200 ms)');
  });
});

describe('response size', () => {
  const MiB = 1024 * 1024;

  it.each(DIALECTS)('$dialect: a gzip body inflating past max_response_bytes fails the try, not retried, usage unknown', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'ok', gzip: true, pad_bytes: 4 * MiB }, { kind: 'ok' }] });
    const res = await h.run(node([c.model]), { providerOverrides: { transport: { maxResponseBytes: MiB } } });
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.status).toBe('failed');
    const a = res.attempts[0]!;
    expect(a.error?.kind).toBe('client_error');
    expect(a.error?.message).toContain('larger than transport.max_response_bytes (1 MiB) after decompression');
    expect(a.error?.message).toContain('sent a response AQVEN does not accept'); // not "rejected the request": the provider answered
    expect(a.tries.map((t) => [t.status, t.error])).toEqual([[200, 'client_error']]);
    expect(a.usageUnknown).toBe(true);
  });

  it.each(DIALECTS)('$dialect: a stream past max_response_bytes stops there, its text discarded, usage unknown', async (c) => {
    h.script({ [c.modelId]: [{ kind: 'ok', gzip: true, pad_bytes: 2 * MiB }] });
    const res = await h.run(node([c.model], { stream: true }), { providerOverrides: { transport: { maxResponseBytes: MiB } } });
    expect(h.requests(c.modelId)).toHaveLength(1);
    const a = res.attempts[0]!;
    expect(a.error?.kind).toBe('client_error');
    expect(a.error?.message).toContain('transport.max_response_bytes');
    expect(a.usageUnknown).toBe(true);
    expect(a.discarded).toBe(true);
  });

  it('a body within max_response_bytes, gzip-encoded and padded, is read whole; its usage is known', async () => {
    h.script({ [GEMINI.modelId]: [{ kind: 'ok', text: 'fine', gzip: true, pad_bytes: 512 * 1024 }] });
    const res = await h.run(node([GEMINI.model]), { providerOverrides: { transport: { maxResponseBytes: MiB } } });
    expect(res.status).toBe('succeeded');
    expect(res.output).toBe('fine');
    expect(res.attempts[0]!.usageUnknown).toBeUndefined();
    expect(res.usage.inputTokens).toBeGreaterThan(0);
  });

  it('a huge gzip error body is read only up to 64 KiB: the status decides, the try is retried as usual', async () => {
    h.script({
      [OPENAI.modelId]: [
        { kind: 'status', status: 503, gzip: true, pad_bytes: 64 * MiB },
        { kind: 'ok', text: 'back' },
      ],
    });
    const res = await h.run(node([OPENAI.model]));
    expect(res.status).toBe('succeeded');
    expect(res.attempts[0]!.tries.map((t) => [t.status, t.error])).toEqual([
      [503, 'server_error'],
      [200, null],
    ]);
  });
});

describe('durations beyond what a Node timer holds', () => {
  it('transport.timeout of 600 h does not fire at once (setTimeout would overflow to 1 ms)', async () => {
    h.script({ [OPENAI.modelId]: [{ kind: 'ok', text: 'in time', latency: { first_token_ms: 30 } }] });
    const hours600 = 600 * 3600 * 1000;
    const res = await h.run(node([OPENAI.model], { policy: { onError: 'fail' } }), {
      providerOverrides: { transport: { timeoutMs: hours600, idleTimeoutMs: hours600, tryDeadlineMs: hours600 } },
    });
    expect(res.attempts[0]!.tries.map((t) => t.error)).toEqual([null]);
    expect(res.output).toBe('in time');
  });
});
