// The agent pages: a save through the policy form changes only the lines it must (the writer's
// long prompt is not re-wrapped), the revision diff keeps each line's indentation, the charts
// show the agent's days with a mark where its policy was saved, and /agents and /agents/[name]
// fit a 1280 px screen and a 390 px phone.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { AgentPage } from './pages/agent-page';
import { e2eProjectDir } from './project-dir';
import { GEMINI, runToEnd } from './sim';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

const writerFile = () => join(e2eProjectDir(), 'agents', 'writer.yaml');
let shipped: string | null = null;

test.afterEach(async () => {
  // the writer as shipped again, for the specs after this one
  if (shipped !== null && readFileSync(writerFile(), 'utf8') !== shipped) writeFileSync(writerFile(), shipped);
  shipped = null;
});

/** The left edge of the `at`-th character of the diff row that reads `text`, in px. */
async function glyphLeft(row: Locator, at: number): Promise<number> {
  return row.locator('.d-text').evaluate((el, i) => {
    const range = document.createRange();
    range.setStart(el.firstChild!, i);
    range.setEnd(el.firstChild!, i + 1);
    return range.getBoundingClientRect().left;
  }, at);
}

/** A save's answer; it may queue behind the what-if estimate (the page's server actions run one at a time). */
async function saved(agent: AgentPage) {
  await expect(agent.saveStatus()).toHaveText(/Saved as revision \d+/, { timeout: 30_000 });
}

async function fitsTheScreen(page: Page, path: string, width: number) {
  const extra = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(extra, `${path} at ${width} px is wider than the screen by ${extra} px`).toBeLessThanOrEqual(0);
}

test('adding the first fallback model through the form leaves every other line of the file byte-identical', async ({ page }) => {
  shipped = readFileSync(writerFile(), 'utf8');
  // the writer has no chain and a prompt longer than 80 columns: a re-print would wrap it
  expect(shipped).not.toContain('fallback_models');
  const model = /^model: .*\n/m.exec(shipped)![0];
  expect(shipped.split('\n').some((l) => l.length > 80)).toBe(true);

  const agent = new AgentPage(page);
  await agent.goto('writer');
  await expect(agent.fallbackModels()).toHaveCount(0);
  await page.getByRole('button', { name: '+ Add fallback model' }).click();
  await agent.fallbackModels().first().fill(`openrouter:${GEMINI}`);
  await agent.save();
  await saved(agent);

  const after = readFileSync(writerFile(), 'utf8');
  // two new lines right after `model:`, every other byte as it was
  expect(after).toBe(shipped.replace(model, `${model}fallback_models:\n- "openrouter:${GEMINI}"\n`));
  const diff = agent.revisions().first().getByTestId('revision-diff');
  await expect(diff.locator('.d-line[data-kind="add"]')).toHaveText(['+fallback_models:', `+- "openrouter:${GEMINI}"`]);
  await expect(diff.locator('.d-line[data-kind="del"]')).toHaveCount(0);

  // and back: removing the last fallback model gives the file as shipped, byte for byte
  await agent.goto('writer');
  await agent.removeAllFallbackModels();
  await agent.save();
  await saved(agent);
  expect(readFileSync(writerFile(), 'utf8')).toBe(shipped);
});

test('the revision diff keeps the indentation of the lines after a change', async ({ page }) => {
  shipped = readFileSync(writerFile(), 'utf8');
  expect(shipped).toMatch(/^output:\n {2}strict: false\n {2}retries: 1\n/m);
  const agent = new AgentPage(page);
  await agent.goto('writer');
  await agent.field('Strict').check();
  await expect(agent.field('Strict')).toBeChecked();
  await agent.save();
  await saved(agent);
  expect(readFileSync(writerFile(), 'utf8')).toBe(shipped.replace('  strict: false\n', '  strict: true\n'));

  const diff = agent.revisions().first().getByTestId('revision-diff');
  const head = diff.locator('.d-line[data-kind="same"]').filter({ hasText: /^\s*output:$/ });
  const changed = diff.locator('.d-line[data-kind="add"]');
  // the context line right after the change: "  retries: 1", its two spaces shown
  const after = diff.locator('.d-line[data-kind="same"]', { hasText: 'retries: 1' });
  await expect(changed).toHaveText('+  strict: true');
  await expect(after).toHaveText('   retries: 1');
  const [o, s, r] = [await glyphLeft(head, 0), await glyphLeft(changed, 2), await glyphLeft(after, 2)];
  // "retries" starts two characters right of "output", exactly where "strict" starts
  expect(r).toBeGreaterThan(o + 10);
  expect(Math.abs(r - s)).toBeLessThan(1);

  await agent.goto('writer');
  await agent.field('Strict').uncheck();
  await expect(agent.field('Strict')).not.toBeChecked();
  await agent.save();
  await saved(agent);
  expect(readFileSync(writerFile(), 'utf8')).toBe(shipped);
});

test('the charts show the agent’s days with a mark on the day its policy was saved', async ({ page, request }) => {
  // a run today, so today has attempts of the writer; the saves above (or this one) mark today
  await runToEnd(request, 'triage', { ticket: `agents spec ${Date.now()}: my invoice is wrong` });
  shipped = readFileSync(writerFile(), 'utf8');
  const agent = new AgentPage(page);
  await agent.goto('writer');
  await agent.field('Retries').fill('2');
  await agent.save();
  await saved(agent);
  const revision = Number(await agent.revisions().first().getAttribute('data-revision'));

  await agent.goto('writer');
  const outcomes = page.getByTestId('outcome-share-chart');
  const spend = page.getByTestId('dropped-spend-chart');
  await expect(outcomes.locator('figcaption')).toContainText(/\d+ attempts? over the last 30 days: \d+% ok/);
  await expect(outcomes.locator('figcaption')).toContainText(`r${revision}`);
  await expect(spend.locator('figcaption')).toContainText(/spent in all|went to \d+ attempts?/);
  for (const chart of [outcomes, spend]) {
    await expect(chart.locator('.recharts-bar-rectangle').first()).toBeVisible();
    // the dashed mark of today's saves, labelled with their revisions
    await expect(chart.locator('.recharts-reference-line')).not.toHaveCount(0);
    await expect(chart.locator('.revision-mark').last()).toContainText(`r${revision}`);
  }
  // the figures in words: today's row names the save
  await outcomes.getByText('Figures by day').click();
  await expect(outcomes.locator('tbody tr').first().locator('td').last()).toContainText(`r${revision}`);

  await agent.field('Retries').fill('1');
  await agent.save();
  await saved(agent);
  expect(readFileSync(writerFile(), 'utf8')).toBe(shipped);
});

test('/agents and /agents/classifier fit a 1280 px screen and a 390 px phone', async ({ page }, testInfo) => {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await openPage(page, '/agents');
    await expect(page.getByTestId('agent-row')).not.toHaveCount(0);
    await fitsTheScreen(page, '/agents', width);
    // the table itself fits: nothing to scroll sideways inside it either
    const table = page.locator('.table-scroll').first();
    expect(await table.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    await shoot(page, testInfo, `agents-${width}.png`);

    await openPage(page, '/agents/classifier');
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await expect(page.getByTestId('agent-charts')).toBeVisible();
    await fitsTheScreen(page, '/agents/classifier', width);
    await shoot(page, testInfo, `agent-classifier-${width}.png`);
  }
});
