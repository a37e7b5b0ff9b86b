// The user docs inside the dashboard (DESIGN: The dashboard, "Docs"): opened from the top bar, a
// page's contents and its links to other pages, a failed node's hint followed to its code's section
// of the error reference, the HTTP API's reference from the document the API serves, a page read on
// a 390 px phone; a name that is not a page is a 404, and signed out the docs are the login page as
// every page is. Screenshots at 1280 and 390 px go with the test output.
import { expect, test, type Page } from '@playwright/test';
import { openPage } from './pages/open';
import { RunPage } from './pages/run-page';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { shoot } from './pages/shoot';

/** Content Security Policy complaints and uncaught errors, from now on */
function watchProblems(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  page.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  return seen;
}

const scrollWidth = (page: Page) => page.evaluate(() => document.scrollingElement!.scrollWidth);

test('the docs open from the top bar; a page has contents, anchors and links to other pages', async ({ page }, testInfo) => {
  const problems = watchProblems(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, '/runs');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' }).click();
  await expect(page).toHaveURL(/\/docs$/);
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' })).toHaveAttribute('aria-current', 'page');
  await shoot(page, testInfo, 'docs-index-1280.png');
  const index = page.getByTestId('docs-index');
  await expect(index.getByRole('link', { name: 'Getting started' })).toBeVisible();
  // the builders' documents are not the user's
  await expect(index.getByRole('link', { name: /design/i })).toHaveCount(0);

  await index.getByRole('link', { name: 'How to call a model' }).click();
  await expect(page).toHaveURL(/\/docs\/how-to-call-a-model$/);
  await expect(page.getByRole('heading', { level: 1, name: 'How to call a model' })).toBeVisible();
  // the contents jump to a section, whose id is GitHub's anchor
  await page.getByTestId('doc-toc').getByRole('link', { name: 'Calling it' }).click();
  await expect(page).toHaveURL(/\/docs\/how-to-call-a-model#calling-it$/);
  await expect(page.locator('h2#calling-it')).toBeInViewport();
  await shoot(page, testInfo, 'docs-page-1280.png', { fullPage: false });

  // a link to another page (agent-specification.md in the markdown) goes to its /docs page
  await page.getByTestId('doc-page').locator('a[href="/docs/agent-specification"]').first().click();
  await expect(page).toHaveURL(/\/docs\/agent-specification$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Agent specification' })).toBeVisible();

  // an error code's section by its code, as a hint links to it
  await openPage(page, '/docs/errors#E_FIELD');
  await expect(page.locator('h2#e_field')).toBeInViewport();
  await shoot(page, testInfo, 'docs-errors-1280.png', { fullPage: false });
  // the seed page (plain text, no # title) has its first line as its title
  await openPage(page, '/docs/what-happens-when-a-model-is-called');
  await expect(page.getByRole('heading', { level: 1, name: 'What happens when a model is called' })).toBeVisible();
  await shoot(page, testInfo, 'docs-seed-1280.png');
  expect(problems).toEqual([]);
});

test('a failed node’s hint links to its error code’s section of the reference', async ({ page, request }, testInfo) => {
  // the writer's answer is cut off; on_truncated is "fail" and draft has no on_fail: the run fails
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'truncated' }] });
  const { id, status } = await runToEnd(request, 'triage', { ticket: 'docs: a hint to follow' }).finally(() => resetScripts(request));
  expect(status).toBe('failed');

  await page.setViewportSize({ width: 1280, height: 900 });
  const run = new RunPage(page);
  await run.goto(id);
  await expect(run.node('draft')).toHaveAttribute('data-status', 'failed');
  // the run's hint and the node's both link to the code's section
  await expect(run.errorHint().getByTestId('error-doc-link')).toHaveAttribute('href', '/docs/errors#truncated');
  const link = run.node('draft').getByTestId('error-doc-link');
  await expect(link).toHaveText('What truncated means →');
  await shoot(page, testInfo, 'docs-run-hint-1280.png');
  await link.click();
  await expect(page).toHaveURL(/\/docs\/errors#truncated$/);
  const section = page.locator('[id="truncated"]');
  await expect(section).toBeInViewport();
  await shoot(page, testInfo, 'docs-error-truncated-1280.png', { fullPage: false });
});

test('a page reads on a 390 px phone: no sideways scrolling, tables and code scroll in their own box', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [name, path] of [
    ['agent-specification', '/docs/agent-specification'],
    ['getting-started', '/docs/getting-started'],
    ['errors', '/docs/errors'],
    ['seed', '/docs/what-happens-when-a-model-is-called'],
    ['api', '/docs/api'],
  ] as const) {
    await openPage(page, path);
    // the error reference has two parts, each with its # title
    await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
    await shoot(page, testInfo, `docs-${name}-390.png`);
    expect(await scrollWidth(page), `${path} scrolls sideways at 390 px`).toBeLessThanOrEqual(390);
  }
  // the page's text is a readable column on the phone, not a scaled-down desktop
  await openPage(page, '/docs/agent-specification');
  const article = await page.getByTestId('doc-page').boundingBox();
  expect(article!.width).toBeGreaterThan(340);
  expect(article!.width).toBeLessThanOrEqual(390);
  const fontSize = await page
    .locator('.doc-page > p')
    .first()
    .evaluate((p) => parseFloat(getComputedStyle(p).fontSize));
  expect(fontSize).toBeGreaterThanOrEqual(14);
  // a table wider than the phone scrolls inside its box
  const table = page.locator('.doc-table').first();
  await expect(table).toBeVisible();
  expect(await table.evaluate((t) => t.scrollWidth > t.clientWidth && getComputedStyle(t).overflowX === 'auto')).toBe(true);
});

test('the HTTP API reference has every route of the document the API serves, and the curl examples', async ({ page, request }, testInfo) => {
  const doc = (await (await request.get('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
  expect(routes.length).toBeGreaterThan(5);

  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, '/docs/api');
  const shown = await page.getByTestId('api-route').evaluateAll((els) => els.map((e) => e.getAttribute('data-route')));
  expect(shown.sort()).toEqual(routes.sort());
  const start = page.locator('[data-testid="api-route"][data-route="POST /api/runs"]');
  await expect(start).toContainText('role editor or above');
  await expect(start).toContainText('Idempotency-Key');
  await expect(page.getByTestId('api-examples')).toContainText('curl -s http://127.0.0.1:3000/api/runs');
  await shoot(page, testInfo, 'docs-api-1280.png', { fullPage: false });
});

test('a name that is not a page is a 404, never a file', async ({ page }) => {
  for (const path of ['/docs/DESIGN', '/docs/no-such-page', '/docs/..%2FREADME', '/docs/errors.md']) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByTestId('doc-page')).toHaveCount(0);
  }
});

test.describe('signed out', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('the docs send to the login page, as every page does', async ({ page }) => {
    for (const path of ['/docs', '/docs/errors', '/docs/api']) {
      await openPage(page, path);
      await expect(page, path).toHaveURL(/\/login\?next=/);
    }
  });
});
