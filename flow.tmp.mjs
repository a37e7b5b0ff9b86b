import { chromium } from '@playwright/test';
const base = 'http://127.0.0.1:3420';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text().slice(0, 300)); });
page.on('pageerror', (e) => console.log('pageerror:', e.message));
const r = await page.request.post(base + '/api/sim/scripts', { data: { scripts: {
  'google/gemini-2.5-flash-lite': [{ kind: 'provider_error', latency: { first_token_ms: 800 } }],
  'openai/gpt-oss-20b': [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, { kind: 'ok', latency: { first_token_ms: 500, tokens_per_s: 40 } }],
} } });
console.log('sim', r.status(), await r.text());
await page.goto(base + '/flows', { waitUntil: 'networkidle' });
const form = page.locator('[data-testid=start-run-form][data-flow=triage]');
await form.getByLabel('Input (JSON)').fill('{"ticket": 5}');
await form.getByRole('button', { name: 'Run triage' }).click();
await form.getByTestId('field-error').waitFor();
console.log('field error:', await form.getByTestId('field-error').evaluate((e) => e.dataset.code + ' ' + e.textContent));
await page.screenshot({ path: '/tmp/scratch/flows-error.png' });
await form.getByLabel('Input (JSON)').fill('{"ticket": "My invoice was charged twice"}');
await form.getByRole('button', { name: 'Run triage' }).click();
await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
console.log('url', page.url());
await page.waitForTimeout(1500);
await page.screenshot({ path: '/tmp/scratch/run-live1.png', fullPage: true });
await page.waitForTimeout(2000);
await page.screenshot({ path: '/tmp/scratch/run-live2.png', fullPage: true });
await page.locator('[data-testid=run-status]').filter({ hasText: /succeeded|failed/ }).waitFor({ timeout: 20000 });
await page.screenshot({ path: '/tmp/scratch/run-live3.png', fullPage: true });
console.log('status', await page.getByTestId('run-status').textContent());
console.log('chain', await page.getByTestId('chain-model').evaluateAll((els) => els.map((e) => e.dataset.model + '=' + e.dataset.state)));
console.log('bars', await page.getByTestId('attempt-bar').evaluateAll((els) => els.map((e) => [e.dataset.outcome, e.dataset.cause, e.dataset.action].join('/'))));
await page.request.post(base + '/api/sim/scripts', { data: { scripts: {} } });
await browser.close();
