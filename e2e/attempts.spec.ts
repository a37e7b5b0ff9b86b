// A node's attempts on the run page (DESIGN: The dashboard, "Attempts"): identical attempts in a
// row fold into one line "×N" that opens; a link or a bar on the timeline opens the fold and moves
// focus to the attempt; a long node lists its attempts as a table with a "Failed only" filter. A
// node skipped because its need failed is shown in the turn it would have run in.
import { expect, test } from '@playwright/test';
import { RunPage } from './pages/run-page';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { shoot } from './pages/shoot';

test.afterEach(async ({ request }) => resetScripts(request));

test('four invalid answers: three identical repairs fold into "×3"; Enter on a bar opens the fold and focuses the attempt; draft is skipped in turn 2', async ({
  page,
  request,
}, testInfo) => {
  // the classifier's model keeps answering without "queue": repaired 3 times, then the node fails and
  // the run is routed to manual_review (classify's on_fail); draft, which needs classify, is skipped
  await loadScripts(request, { [GEMINI]: [{ kind: 'invalid' }], [GPT]: [{ kind: 'ok' }] });
  const { id, status } = await runToEnd(request, 'triage', { ticket: 'attempts spec: fold my repeats' });
  expect(status).toBe('succeeded');
  const run = new RunPage(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await run.goto(id);

  const classify = run.node('classify');
  const fold = classify.getByTestId('attempt-repeat');
  await expect(fold).toHaveCount(1);
  await expect(fold).toHaveAttribute('data-count', '3');
  await expect(fold.getByTestId('repeat-count')).toHaveText('×3');
  await expect(run.attemptDetails('classify')).toHaveCount(1); // #4, the last answer
  await expect(run.attemptBars('classify')).toHaveCount(4);
  await shoot(page, testInfo, 'repeats-1280.png');
  await fold.getByRole('button', { name: 'Show all 3' }).click();
  await expect(run.attemptDetails('classify')).toHaveCount(4);

  // folded again on a fresh page; the keyboard on the timeline opens it and lands on attempt #2
  await page.reload();
  await expect(run.attemptDetails('classify')).toHaveCount(1);
  await run.attemptBars('classify').nth(1).focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('#attempt-classify-2')).toBeFocused();
  await expect(run.attemptDetails('classify')).toHaveCount(4);

  // routed around: draft is shown in turn 2 beside manual_review, the route that ran instead
  await expect(page.locator('.turn[data-turn="2"] [data-testid="node-row"][data-node="draft"]')).toHaveAttribute('data-status', 'skipped');
  await expect(run.node('draft')).toContainText('skipped: needs classify, which failed');
  await expect(page.locator('.turn[data-turn="1"] [data-testid="node-row"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="graph-edge"][data-kind="on_fail"]')).toHaveAttribute('data-taken', 'true');
  await expect(page.locator('[data-testid="graph-node"][data-node="classify"]')).toHaveAttribute('aria-label', /failed; the run was routed to manual_review/);
});

test('a node with eight attempts lists them as a table; "Failed only" hides the kept answer', async ({ page, request }, testInfo) => {
  // three repairs and an error on the first model, three repairs and an answer on the fallback
  await loadScripts(request, {
    [GEMINI]: [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid' }, { kind: 'provider_error' }],
    [GPT]: [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid' }, { kind: 'ok' }],
  });
  const { id, status } = await runToEnd(request, 'triage', { ticket: 'attempts spec: a long node' });
  expect(status).toBe('succeeded');
  const run = new RunPage(page);
  await run.goto(id);
  const classify = run.node('classify');
  const rows = classify.getByTestId('attempt-row');
  await expect(classify.getByTestId('attempt-table')).toBeVisible();
  await expect(rows).toHaveCount(4);
  await expect(rows.nth(0)).toHaveAttribute('data-count', '3');
  await expect(rows.nth(2)).toHaveAttribute('data-count', '3');
  await expect(run.attemptDetails('classify')).toHaveCount(0);
  await classify.getByTestId('failed-only').click();
  await expect(classify.getByTestId('failed-only')).toHaveAttribute('aria-pressed', 'true');
  await expect(rows).toHaveCount(3);
  await expect(rows.last()).toHaveAttribute('data-seq', '5');
  await rows.nth(1).click();
  await expect(run.attemptDetails('classify')).toHaveCount(1);
  await expect(run.attemptDetails('classify')).toHaveAttribute('data-cause', 'provider_error');
  await shoot(page, testInfo, 'attempt-table-1280.png');
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
  await shoot(page, testInfo, 'attempt-table-390.png');
});
