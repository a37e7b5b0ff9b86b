import { expect, test } from '@playwright/test';
import { E2E_ORIGIN, GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';

test.afterEach(async ({ request }) => resetScripts(request));

test('the runs API: 202 with a location, the run record, filters and cursor pages', async ({ request }) => {
  await loadScripts(request, { [GEMINI]: [{ kind: 'refusal' }], [GPT]: [{ kind: 'ok' }] });
  const routed = await runToEnd(request, 'triage', { ticket: 'api: refused then routed' });
  await loadScripts(request, { [GPT]: [{ kind: 'truncated', parses: true }] });
  const failed = await runToEnd(request, 'long-answer', { question: 'api: cut off' });
  expect(failed.status).toBe('failed');

  // run ids begin with their time (UUID v7), wherever the run was started
  for (const id of [routed.id, failed.id]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(routed.id < failed.id).toBe(true);

  const record = await (await request.get(`/api/runs/${failed.id}`)).json();
  expect(record).toMatchObject({ id: failed.id, flow: 'long-answer', status: 'failed', error: { code: 'truncated', node: 'draft' } });

  const failedOnly = await (await request.get('/api/runs?status=failed&flow=long-answer')).json();
  expect(failedOnly.items.map((r: { id: string }) => r.id)).toContain(failed.id);
  expect(failedOnly.items.every((r: { status: string; flow: string }) => r.status === 'failed' && r.flow === 'long-answer')).toBe(true);
  const refused = await (await request.get('/api/runs?cause=refusal')).json();
  expect(refused.items.map((r: { id: string }) => r.id)).toContain(routed.id);

  // one run per page, newest first, until the cursor runs out
  const seen: string[] = [];
  let url: string | null = '/api/runs?limit=1';
  while (url) {
    const page = await (await request.get(url)).json();
    seen.push(...page.items.map((r: { id: string }) => r.id));
    url = page.nextCursor ? `/api/runs?limit=1&cursor=${page.nextCursor}` : null;
  }
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.indexOf(failed.id)).toBeLessThan(seen.indexOf(routed.id));

  const bad = await request.get('/api/runs?status=bogus');
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error).toContain('status');
  expect((await request.get('/api/runs/no-such-run')).status()).toBe(404);
  const badInput = await request.post('/api/runs', { data: { flow: 'triage', input: { ticket: 7 } }, headers: { Origin: E2E_ORIGIN } });
  expect(badInput.status()).toBe(400);
  expect((await badInput.json()).field).toBe('input.ticket');
});
