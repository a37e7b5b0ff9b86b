import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { RunsPage } from './pages/runs-page';
import { E2E_ORIGIN, GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

// Failure groups and the live run list. Works on a fresh showcase copy signed in and on a shared
// dashboard with a history of its own: the spec finds its rows by a word only its runs carry.

test.afterEach(async ({ request }) => resetScripts(request));

/** letters only, none of them hex digits: the failure signature keeps such a word as it is */
const word = () => Array.from({ length: 10 }, () => 'ghjkmnpqrstvwxyz'[Math.floor(Math.random() * 16)]).join('');

async function checkAndShoot(page: Page, name: string, path: string, testInfo: TestInfo) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await openPage(page, path);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    const extra = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(extra, `${path} at ${width} px is wider than the screen by ${extra} px`).toBeLessThanOrEqual(0);
    await shoot(page, testInfo, `${name}-${width}.png`);
  }
}

test('one agent failing the same way in several runs is one failure group, and its example opens the run', async ({ page, request }, testInfo) => {
  const marker = word();
  // the classifier's model and its fallback both fail with the same text: classify fails and its
  // on_fail route (manual_review) answers — each run succeeds by routing around the failure
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    await loadScripts(request, {
      // then ok: a run of someone else on a shared server gets an answer, not this failure
      [GEMINI]: [{ kind: 'provider_error', message: `upstream ${marker} melted` }, { kind: 'ok' }],
      [GPT]: [{ kind: 'provider_error', message: `upstream ${marker} melted` }, { kind: 'ok' }],
    });
    const run = await runToEnd(request, 'triage', { ticket: `failures spec ${i}: my invoice is wrong` });
    expect(run.status).toBe('succeeded');
    ids.push(run.id);
  }

  // the run list marks them: succeeded, but only because a failed node was routed around
  const runs = new RunsPage(page);
  await runs.goto();
  for (const id of ids) await expect(runs.row(id)).toHaveAttribute('data-routed-around', '');

  await openPage(page, '/failures');
  await expect(page.getByRole('link', { name: 'Last 24 hours' })).toHaveAttribute('aria-current', 'page');
  const groups = page.getByTestId('failure-group').filter({ hasText: marker });
  // the primary model's failed attempts: one group, the classifier's, of the three runs (a run on a
  // shared dashboard may have met the script too), examples newest first
  const primary = groups.filter({ hasText: GEMINI }).and(page.locator('[data-level="attempt"]'));
  await expect(primary).toHaveCount(1);
  await expect(primary).toHaveAttribute('data-agent', 'classifier');
  expect(Number(await primary.getByTestId('failure-count').textContent())).toBeGreaterThanOrEqual(3);
  await expect(primary).toContainText('provider_error');
  const examples = primary.getByTestId('failure-example');
  await expect(examples).toHaveCount(3);
  const newest = examples.and(page.locator(`[data-run="${ids[2]}"]`));
  await expect(newest).toHaveAttribute('data-routed-around', '');
  // the failed node is a group of its own (level node), its examples the same runs
  await expect(groups.and(page.locator('[data-level="node"]')).first().getByTestId('failure-example')).toHaveCount(3);

  // the agent filter keeps the group; another agent's view has none of it
  await page.getByRole('form', { name: 'Failure filters' }).getByLabel('Agent').selectOption('classifier');
  await expect(page).toHaveURL(/agent=classifier/);
  await expect(groups.filter({ hasText: GEMINI }).and(page.locator('[data-level="attempt"]'))).toHaveCount(1);
  await openPage(page, '/failures?window=7d&agent=writer');
  await expect(page.getByTestId('failure-group').filter({ hasText: marker })).toHaveCount(0);

  await openPage(page, '/failures');
  await newest.getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${ids[2]}#attempt-classify-1$`));
  await expect(page.locator('[data-testid="node-row"][data-node="classify"]')).toHaveAttribute('data-status', 'failed');
  await expect(page.locator('#attempt-classify-1')).toContainText(marker);

  await checkAndShoot(page, 'failures', '/failures', testInfo);
});

test('a run started elsewhere appears on the first page of /runs without a reload', async ({ page, request }, testInfo) => {
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'ok' }] });
  const runs = new RunsPage(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await runs.goto();
  await expect(page.getByRole('heading', { level: 1, name: 'Runs' })).toBeVisible();
  // a reload would drop this
  await page.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));

  const res = await request.post('/api/runs', { data: { flow: 'triage', input: { ticket: 'live list spec' } }, headers: { Origin: E2E_ORIGIN } });
  expect(res.status()).toBe(202);
  const { id } = (await res.json()) as { id: string };
  await expect(runs.row(id)).toBeVisible({ timeout: 5_000 });
  await expect(runs.rows().first()).toHaveAttribute('data-run', id);
  await expect(runs.row(id)).toHaveAttribute('data-status', 'succeeded', { timeout: 30_000 });
  expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);

  // a later page stays as it is: a new run shows on the first page only
  const older = page.getByRole('link', { name: 'Older →' });
  if (await older.count()) {
    await older.click();
    await expect(page).toHaveURL(/cursor=/);
    const before = await runs.rows().first().getAttribute('data-run');
    const again = await runToEnd(request, 'triage', { ticket: 'live list spec: a second run' });
    await page.waitForTimeout(3_000);
    await expect(runs.row(again.id)).toHaveCount(0);
    await expect(runs.rows().first()).toHaveAttribute('data-run', before!);
  }

  await checkAndShoot(page, 'runs', '/runs', testInfo);
});

test('an editor replays a whole failure group under the current files and sees how many now succeed', async ({ page, request }) => {
  const marker = word();
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    await loadScripts(request, {
      [GEMINI]: [{ kind: 'provider_error', message: `bulk ${marker} melted` }, { kind: 'ok' }],
      [GPT]: [{ kind: 'provider_error', message: `bulk ${marker} melted` }, { kind: 'ok' }],
    });
    ids.push((await runToEnd(request, 'triage', { ticket: `bulk replay spec ${i}: my invoice is wrong` })).id);
  }
  // the provider answers again: every replay of the group's failed classify nodes succeeds
  await resetScripts(request);

  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, '/failures?agent=classifier');
  const group = page.getByTestId('failure-group').filter({ hasText: marker }).and(page.locator('[data-level="node"]'));
  await expect(group).toHaveCount(1);
  await group.getByTestId('replay-group-open').click();
  // a cap that is not an amount starts nothing: the form says why
  await group.getByTestId('replay-group-cap').fill('abc');
  await group.getByTestId('replay-group-start').click();
  await expect(group.getByTestId('field-error')).toBeVisible();
  await group.getByTestId('replay-group-cap').fill('1');
  await group.getByTestId('replay-group-start').click();
  const batch = group.getByTestId('replay-batch');
  await expect(batch).toHaveAttribute('data-done', 'true', { timeout: 60_000 });
  await expect(batch.getByTestId('replay-batch-summary')).toContainText('2 of 2 now succeed');
  await batch.getByText('Replays (2)').click();
  for (const id of ids) {
    const item = batch.locator('li', { has: page.locator(`a[href^="/runs/${id}#node-classify"]`) });
    await expect(item).toHaveAttribute('data-state', 'succeeded');
    // the replay is a run of its own, linked to its original
    await expect(item.getByRole('link', { name: /^replay / })).toBeVisible();
  }
  const replayLinks = await batch.getByRole('link', { name: /^replay / }).evaluateAll((as) => as.map((a) => a.getAttribute('href')));

  // the batch is stored: after a reload (or on another server process) it is among the recent batches
  const batchId = await batch.getAttribute('data-batch');
  await page.reload();
  const row = page.getByTestId('replay-batch-row').and(page.locator(`[data-batch="${batchId}"]`));
  await expect(row).toHaveAttribute('data-state', 'finished');
  await expect(row.getByTestId('replay-batch-result')).toHaveText('2 of 2 now succeed');
  await expect(row).toContainText('classifier');
  await row.getByRole('link', { name: 'its replays →' }).click();
  await expect(page).toHaveURL(/\/runs\?kind=replay&/);
  for (const href of replayLinks) await expect(page.locator(`a[href^="${href}"]`).first()).toBeVisible();
});
