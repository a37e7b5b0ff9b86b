// The dashboard's request checks against the real server (DESIGN: The dashboard, "Request checks"):
// foreign hosts and origins refused, oversized bodies refused before they are read, security
// headers on every answer. Playwright's API client sends no Origin unless told.
import { request as http } from 'node:http';
import { expect, test } from '@playwright/test';
import { createToken } from './accounts';
import { E2E_ORIGIN as BASE, waitForRun } from './sim';

const RUN = { flow: 'triage', input: { ticket: 'request checks: same origin' } };

test('POST /api/runs: a same-origin post is accepted, a foreign or missing Origin is refused', async ({ request: bare }) => {
  const ok = await bare.post('/api/runs', { data: RUN, headers: { Origin: BASE } });
  expect(ok.status(), await ok.text()).toBe(202);
  await waitForRun(bare, ((await ok.json()) as { id: string }).id);

  const foreign = await bare.post('/api/runs', { data: RUN, headers: { Origin: 'http://evil.example' } });
  expect(foreign.status()).toBe(403);
  expect(await foreign.text()).toMatch(/^refused: .*Origin.*\n$/);

  const none = await bare.post('/api/runs', { data: RUN });
  expect(none.status()).toBe(403);
  expect(await none.text()).toContain('Origin');

  // a service sends a bearer token and no Origin: past the Origin check, the token itself is checked
  const service = await bare.post('/api/runs', { data: RUN, headers: { Authorization: 'Bearer aqven_unknown-token' } });
  expect(service.status(), await service.text()).toBe(401);
});

test('a foreign Host is refused, reads and writes alike (DNS rebinding)', async ({ request: bare }) => {
  const read = await bare.get('/runs', { headers: { Host: 'evil.example' } });
  expect(read.status()).toBe(421);
  expect(await read.text()).toContain('evil.example');
  const write = await bare.post('/api/runs', { data: RUN, headers: { Host: 'evil.example', Origin: 'http://evil.example' } });
  expect(write.status()).toBe(421);
  // a forwarded host is not trusted without AQVEN_TRUST_PROXY=1
  expect((await bare.get('/runs', { headers: { 'X-Forwarded-Host': 'evil.example' } })).status()).toBe(200);
  expect((await bare.get('/runs', { headers: { Host: 'evil.example', 'X-Forwarded-Host': '127.0.0.1' } })).status()).toBe(421);
});

test('a body over 1 MiB is refused with 413, declared or chunked', async ({ request: bare }) => {
  const big = { flow: 'triage', input: { ticket: 'x'.repeat(2 * 1024 * 1024) } };
  const declared = await bare.post('/api/runs', { data: big, headers: { Origin: BASE } });
  expect(declared.status()).toBe(413);

  // no Content-Length: the route's capped read refuses it (after the caller is known: a service's token)
  const token = createToken('e2e-chunked', 'editor');
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const r = http(
      `${BASE}/api/runs`,
      { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    r.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? resolve({ status: -1, body: err.code }) : reject(err)));
    const piece = JSON.stringify(big);
    for (let i = 0; i < piece.length; i += 64 * 1024) r.write(piece.slice(i, i + 64 * 1024));
    r.end();
  });
  expect(chunked.status, chunked.body).toBe(413);
  expect(chunked.body).toContain('AQVEN_MAX_BODY_BYTES');
});

test('every answer carries the security headers and no X-Powered-By', async ({ request: bare }) => {
  for (const res of [await bare.get('/runs'), await bare.get('/api/runs'), await bare.post('/api/runs', { data: RUN })]) {
    const h = res.headers();
    expect(h['x-frame-options']).toBe('DENY');
    expect(h['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(h['referrer-policy']).toBe('same-origin');
    expect(h['x-content-type-options']).toBe('nosniff');
    expect(h['x-powered-by']).toBeUndefined();
  }
});

test('a server action from another site is refused before it runs', async ({ request: bare }) => {
  // the form's own post (Next-Action) from a foreign Origin or none: 403 before Next.js reads it
  for (const headers of [{ 'Next-Action': 'deadbeef', Origin: 'http://evil.example' }, { 'Next-Action': 'deadbeef' }] as Record<string, string>[]) {
    const res = await bare.post('/providers', { headers, data: '[]' });
    expect(res.status()).toBe(403);
  }
});
