// The Content-Security-Policy against the real server (DESIGN: The dashboard, "Request checks"): a
// fresh nonce per answer, on every script of the page, and pages that load and stay interactive
// without one violation. API calls go through the page's own context (its cookies, if any).
import { expect, test, type Page } from '@playwright/test';
import { AgentPage } from './pages/agent-page';
import { RunPage } from './pages/run-page';
import { RunsPage } from './pages/runs-page';
import { E2E_ORIGIN, GEMINI, GPT, loadScripts, resetScripts, waitForRun } from './sim';

const NONCE = /'nonce-([A-Za-z0-9+/]+={0,2})'/;

function nonceOf(csp: string | undefined): string {
  const nonce = NONCE.exec(csp ?? '')?.[1];
  expect(nonce, `a nonce in ${csp}`).toBeTruthy();
  return nonce!;
}

/**
 * Collects, for every document the page shows from now on, each `securitypolicyviolation` (logged
 * to the console by a listener added before the page's own scripts), the browser's own CSP
 * complaints, and uncaught errors.
 */
async function watchViolations(page: Page): Promise<string[]> {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  page.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.log(`Content Security Policy violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  return seen;
}

/** Every script tag of the served HTML carries the answer's nonce. */
function expectNonceOnEveryTag(html: string, nonce: string): void {
  const tags = html.match(/<script\b[^>]*>/g) ?? [];
  expect(tags.length).toBeGreaterThan(0);
  for (const tag of tags) expect(tag).toContain(`nonce="${nonce}"`);
}

/**
 * Opens `path` and waits until the page has settled: the served scripts carry the answer's nonce;
 * in the browser, a script without it is a chunk of our own that Next.js's runtime added later
 * (trusted through 'strict-dynamic'), never an inline one. `loaded` checks the page as it loaded,
 * before it settles: a page polling a live run once a second is idle only between polls, so on a
 * busy machine it may settle only once the run has ended.
 */
async function open(page: Page, path: string, status = 200, loaded?: () => Promise<void>): Promise<void> {
  const res = await page.goto(path);
  expect(res?.status(), path).toBe(status);
  const nonce = nonceOf(res!.headers()['content-security-policy']);
  expectNonceOnEveryTag(await res!.text(), nonce);
  await loaded?.();
  await page.waitForLoadState('networkidle');
  const scripts = await page.locator('script').evaluateAll((els) => els.map((s) => ({ nonce: (s as HTMLScriptElement).nonce, src: (s as HTMLScriptElement).src })));
  expect(scripts.filter((s) => s.nonce === nonce).length, path).toBeGreaterThan(0);
  for (const s of scripts.filter((s) => s.nonce !== nonce)) expect(s, path).toEqual({ nonce: '', src: expect.stringMatching(new RegExp(`^${E2E_ORIGIN}/_next/static/`)) });
}

test.afterEach(async ({ page }) => {
  await resetScripts(page.request);
});

test('every page answer has a policy with a fresh nonce, and no inline script is allowed', async ({ page }) => {
  const [a, b] = [await page.request.get('/runs'), await page.request.get('/runs')];
  const [cspA, cspB] = [a.headers()['content-security-policy'], b.headers()['content-security-policy']];
  const [na, nb] = [nonceOf(cspA), nonceOf(cspB)];
  expect(na).not.toBe(nb);
  expect(Buffer.from(na, 'base64')).toHaveLength(16);

  const scriptSrc = cspA.split(';').find((d) => d.trim().startsWith('script-src '))!;
  expect(scriptSrc).toContain(`'nonce-${na}'`);
  expect(scriptSrc).toContain("'strict-dynamic'");
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'"); // a production build
  for (const d of ["object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'", "connect-src 'self'"]) expect(cspA).toContain(d);

  expectNonceOnEveryTag(await a.text(), na);
});

test('/runs, a run page and an agent page load and work without a violation', async ({ page }) => {
  const violations = await watchViolations(page);
  // the run takes over 12 s, so /runs (opened within that, even on a busy machine) and its page see it
  // running, then finished, without a reload
  const slow = (ms: number) => ({ kind: 'ok', latency: { first_token_ms: ms } });
  await loadScripts(page.request, { [GEMINI]: [slow(10_000)], [GPT]: [slow(2500)] });
  const started = await page.request.post('/api/runs', { data: { flow: 'triage', input: { ticket: 'CSP: the page keeps working' } }, headers: { Origin: E2E_ORIGIN } });
  expect(started.status(), await started.text()).toBe(202);
  const { id } = (await started.json()) as { id: string };

  const runs = new RunsPage(page);
  await open(page, '/runs', 200, () => expect(runs.row(id)).toHaveAttribute('data-status', /^(queued|running)$/));
  // React Query polls /api/runs while the run is live (connect-src 'self')
  await expect(runs.row(id)).toHaveAttribute('data-status', /^(succeeded|failed)$/, { timeout: 30_000 });

  await open(page, `/runs/${id}`);
  await expect(new RunPage(page).status()).toHaveText(/^(succeeded|failed)$/);
  await waitForRun(page.request, id);

  const agent = new AgentPage(page);
  await open(page, '/agents/classifier');
  // the policy form validates on the client: it is hydrated
  await agent.removeAllFallbackModels();
  await expect(agent.fieldError('E_OUTCOME_FALLBACK')).toBeVisible();

  expect(violations).toEqual([]);
});

test("a page that is not there (Next.js's own 404, and a page's notFound()) loads without a violation", async ({ page }) => {
  const violations = await watchViolations(page);
  for (const path of ['/no-such-page', '/runs/00000000-0000-4000-8000-000000000000', '/agents/no-such-agent']) await open(page, path, 404);
  expect(violations).toEqual([]);
});
