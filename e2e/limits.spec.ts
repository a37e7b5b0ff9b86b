// Structural limits on the dashboard (DESIGN: Structural limits, "On the dashboard"): what `aqven
// limits` measured shows on the agent page (its model and its fallback) and on /providers, and an
// editor can start a probe from the agent page and watch it to its end. The served project is a
// showcase copy with simulated providers; measurements of earlier specs or runs may be there too,
// so each test reads its own figures (the CLI's JSON, or the probe it started).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { aqven } from './accounts';
import { e2eProjectDir } from './project-dir';
import { GEMINI, GPT } from './sim';
import { openPage } from './pages/open';

const FLASH_LITE = `openrouter:${GEMINI}`;
const GPT_OSS = `openrouter:${GPT}`;

interface CliReport {
  runId: string;
  measuredOn: string;
  dimensions: { dimension: string; status: string; lastHeld: number | null; firstFailed: number | null }[];
}

const card = (page: Page, model: string): Locator => page.locator(`[data-testid="limits-model"][data-model="${model}"]`);
const cell = (c: Locator, dimension: string): Locator => c.locator(`[data-testid="limit-cell"][data-dimension="${dimension}"]`);

async function fitsTheScreen(page: Page) {
  const extra = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(extra, `${page.url()} is wider than the screen by ${extra} px`).toBeLessThanOrEqual(0);
}

test('the agent page and /providers show what aqven limits measured, with the date', async ({ page }) => {
  test.setTimeout(180_000);
  // the CLI measures with its own simulator, playing the project's declared limits
  const report = JSON.parse(aqven(['limits', FLASH_LITE, '--simulate', '--dimension', 'depth', '--trials', '3', '--json'])) as CliReport;
  const depth = report.dimensions.find((d) => d.dimension === 'depth')!;
  expect(depth.lastHeld).not.toBeNull();

  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await openPage(page, '/agents/classifier');
    const primary = card(page, FLASH_LITE);
    await expect(primary).toBeVisible();
    const figure = cell(primary, 'depth');
    await expect(figure).toHaveAttribute('data-held', String(depth.lastHeld));
    await expect(figure).toHaveAttribute('data-failed', depth.firstFailed === null ? '' : String(depth.firstFailed));
    await expect(figure).toContainText(report.measuredOn);
    // the fallback model has its own card, marked as such
    await expect(card(page, GPT_OSS)).toContainText('fallback');
    await fitsTheScreen(page);

    await openPage(page, '/providers');
    await expect(cell(card(page, FLASH_LITE), 'depth')).toHaveAttribute('data-held', String(depth.lastHeld));
    await fitsTheScreen(page);
  }

  // the showcase's extractor runs a node 7 levels deep: past a depth that failed, the agent page says so
  if (existsSync(join(e2eProjectDir(), 'agents', 'extractor.yaml')) && depth.firstFailed !== null && depth.firstFailed <= 7) {
    await openPage(page, '/agents/extractor');
    await expect(page.locator('[data-testid="limit-warning"][data-node="catalogue"]')).toContainText('nests 7 levels deep');
    await expect(page.locator('[data-testid="limit-warning"][data-node="order"]')).toHaveCount(0);
  }

  // the levels measured, with their first-try rates, are one click away
  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, '/agents/classifier');
  const primary = card(page, FLASH_LITE);
  await primary.locator('details.limit-details > summary').click();
  const levels = primary.locator('[data-testid="limit-dimension"][data-dimension="depth"] [data-testid="limit-level"]');
  await expect(levels.first()).toBeVisible();
  expect(await levels.count()).toBeGreaterThanOrEqual(2);
});

test('an editor starts a probe from the agent page and watches it to its end', async ({ page }) => {
  test.setTimeout(180_000);
  await openPage(page, '/agents/classifier');
  const primary = card(page, FLASH_LITE);
  await primary.getByTestId('limits-open').click();
  const form = primary.getByTestId('limits-form');
  await form.locator('select[name="dimension"]').selectOption('enum');
  // settings of its own (2 trials a level): a measurement apart from the CLI's
  await form.locator('input[name="trials"]').fill('2');
  await form.locator('input[name="maxCalls"]').fill('40');
  await form.locator('input[name="maxCost"]').fill('0.5');
  await primary.getByTestId('limits-start').click();

  const probe = primary.getByTestId('limit-probe');
  // a dev server may compile the route on its first request
  await expect(probe).toBeVisible({ timeout: 30_000 });
  await expect(probe.getByTestId('limit-probe-summary')).toContainText('/40');
  await expect(probe).toHaveAttribute('data-done', 'true', { timeout: 150_000 });
  await expect(probe.getByTestId('limit-probe-summary')).toContainText(/Measured|Stopped/);
  // the run it made is linked, and the enum figure is the one it just measured
  await expect(probe.getByRole('link', { name: /^run / })).toBeVisible();
  const figure = cell(primary, 'enum');
  await expect(figure).toHaveAttribute('data-measured', 'true');
  const levels = primary.locator('[data-testid="limit-dimension"][data-dimension="enum"] [data-testid="limit-level"]');
  expect(await levels.count()).toBeGreaterThanOrEqual(1);

  // the page read afresh shows the same figure (it is stored, not only in the page)
  const held = await figure.getAttribute('data-held');
  await page.reload();
  await expect(cell(card(page, FLASH_LITE), 'enum')).toHaveAttribute('data-held', held ?? '');
});
