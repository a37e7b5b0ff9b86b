import { expect, test, type Page } from '@playwright/test';
import { FlowsPage } from './pages/flows-page';
import { RunPage } from './pages/run-page';
import { GEMINI, GPT, loadScripts, resetScripts } from './sim';
import { shortRunId } from '../lib/shared/short-id';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

// Search from the top bar and short run ids. Works on a fresh history and on a long one: each test
// finds its own run by words made for it.

test.afterEach(async ({ request }) => {
  await resetScripts(request);
});

/** Starts triage from /flows with `ticket` and waits for it to finish; its id. */
async function startRun(page: Page, ticket: string): Promise<string> {
  const flows = new FlowsPage(page);
  await flows.goto();
  await flows.start('triage', { ticket });
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/, { timeout: 30_000 });
  await expect(new RunPage(page).status()).toHaveText(/succeeded|failed/, { timeout: 30_000 });
  return page.url().split('/').pop()!;
}

async function searchFromTopBar(page: Page, q: string) {
  const box = page.getByTestId('search-box');
  // while the page streams, the box's fallback and its rendered copy may both be in the document
  await expect(box).toHaveCount(1);
  await box.fill(q);
  await box.press('Enter');
  await expect(page).toHaveURL(`/search?q=${encodeURIComponent(q).replace(/%20/g, '+')}`);
}

test('a word of a run input or a node output, searched from the top bar, leads to the run', async ({ page, request }, testInfo) => {
  const tag = Date.now().toString(36);
  const inWord = `zanzibar${tag}`;
  const outWord = `marmalade${tag}`;
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'ok', text: `Dear customer, the ${outWord} parcel is on its way.` }] });
  await page.setViewportSize({ width: 1280, height: 900 });
  const runId = await startRun(page, `Where is my ${inWord} parcel?`);

  await openPage(page, '/runs');
  await searchFromTopBar(page, inWord.toUpperCase());
  const hits = page.getByTestId('search-hit');
  await expect(hits).toHaveCount(1);
  await expect(hits.first()).toHaveAttribute('data-run', runId);
  await expect(hits.first()).toHaveAttribute('data-field', 'input');
  await expect(hits.first().locator('mark')).toHaveText(inWord);
  await expect(hits.first()).toContainText(shortRunId(runId));
  // the box keeps the words searched for
  await expect(page.getByTestId('search-box')).toHaveCount(1);
  await expect(page.getByTestId('search-box')).toHaveValue(inWord.toUpperCase());
  await hits.first().getByRole('link').click();
  await expect(page).toHaveURL(`/runs/${runId}`);

  // a node's output: the hit opens the run on that node
  // (the simulator's scripts are shared: another spec's run may have answered with the same text)
  await searchFromTopBar(page, `${outWord} parcel`);
  const mine = page.locator(`[data-testid="search-hit"][data-run="${runId}"]`);
  await expect(mine).toHaveCount(1);
  await expect(mine).toHaveAttribute('data-field', 'output');
  await expect(mine).toContainText('output of draft');
  await expect(page.getByTestId('search-summary')).toContainText(/\d+ hits? for/);
  await shoot(page, testInfo, 'search-1280.png');
  await mine.getByRole('link').click();
  await expect(page).toHaveURL(`/runs/${runId}#node-draft`);
  await expect(new RunPage(page).node('draft')).toBeVisible();

  // on a phone: the box has a row of its own, the hits use the width they have
  await page.setViewportSize({ width: 390, height: 844 });
  await searchFromTopBar(page, outWord.slice(0, 12) + '*');
  await expect(mine).toHaveCount(1);
  await expect(page.getByTestId('search-box')).toHaveCount(1);
  const box = await page.getByTestId('search-box').boundingBox();
  expect(box!.width).toBeGreaterThan(300);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shoot(page, testInfo, 'search-390.png');

  // words found nowhere: said so
  await searchFromTopBar(page, `${inWord} ${outWord}`);
  await expect(hits).toHaveCount(0);
  await expect(page.getByTestId('search-empty')).toBeVisible();
});

test('a run opens by its short id, in the URL, the API and the search box', async ({ page, request }) => {
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'ok' }] });
  const runId = await startRun(page, 'short id spec: where is my parcel?');
  // the start of the id's random last group, shown in bold in the run's header
  const short = shortRunId(runId);
  expect(short).toBe(runId.slice(24, 32));

  await openPage(page, `/runs/${short}`);
  await expect(page).toHaveURL(`/runs/${runId}`);
  await expect(new RunPage(page).status()).toBeVisible();
  await expect(page.getByTestId('run-id').locator('strong')).toHaveText(short);
  await expect(page.getByTestId('run-id')).toHaveText(runId);

  const api = await request.get(`/api/runs/${short}`);
  expect(api.status()).toBe(200);
  expect(((await api.json()) as { id: string }).id).toBe(runId);

  await searchFromTopBar(page, short);
  const idHit = page.locator(`[data-testid="search-hit"][data-field="id"][data-run="${runId}"]`);
  await expect(idHit).toHaveCount(1);
  await idHit.getByRole('link').click();
  await expect(page).toHaveURL(`/runs/${runId}`);
});
