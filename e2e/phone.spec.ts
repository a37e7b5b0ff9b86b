// The run page, /flows, /providers, /account and /login on a 390 px phone (a narrow layout, not a
// scaled desktop) and at 1280 px: no sideways scrolling, a timeline whose tracks have the width
// under their node's name, gauges and axis labels that do not overlap. Screenshots of each page at
// both widths go with the test output.
import { expect, test, type Locator, type Page } from '@playwright/test';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

test.afterEach(async ({ request }) => resetScripts(request));

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function boxes(l: Locator): Promise<Box[]> {
  return l.evaluateAll((els) =>
    els
      .filter((e) => (e as HTMLElement).offsetParent !== null)
      .map((e) => {
        const r = e.getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width, height: r.height };
      }),
  );
}

async function scrollWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.scrollingElement!.scrollWidth);
}

test('the pages fit a 390 px phone with a usable timeline, and a 1280 px screen', async ({ page, request }, testInfo) => {
  // a fallback (two attempts, two long model strings in the gauges and the chain) and a node routed around
  await loadScripts(request, { [GEMINI]: [{ kind: 'provider_error' }], [GPT]: [{ kind: 'ok' }] });
  const run = await runToEnd(request, 'triage', { ticket: 'phone spec: a run to lay out on a small screen' });
  const pages = [
    ['run', `/runs/${run.id}`],
    ['flows', '/flows'],
    ['providers', '/providers'],
    ['account', '/account'],
    ['login', '/login'],
  ] as const;
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, path] of pages) {
      await openPage(page, path);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await shoot(page, testInfo, `${name}-${width}.png`);
      expect(await scrollWidth(page), `${path} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    }
  }

  // the run page on the phone: each track as wide as the node under which it sits, bars in it
  await page.setViewportSize({ width: 390, height: 900 });
  await openPage(page, `/runs/${run.id}`);
  const classify = page.locator('[data-testid="node-row"][data-node="classify"]');
  await expect(classify.getByTestId('attempt-bar')).toHaveCount(2);
  const track = (await boxes(classify.locator('.track')))[0]!;
  expect(track.width).toBeGreaterThan(300);
  const label = (await boxes(classify.locator('.node-label')))[0]!;
  expect(label.y + label.height).toBeLessThanOrEqual(track.y + 1); // the name above, not beside
  for (const bar of await boxes(classify.getByTestId('attempt-bar'))) expect(bar.width).toBeGreaterThan(0);
  // axis labels side by side, never on top of each other
  const ticks = await boxes(page.locator('.axis .tick'));
  expect(ticks.length).toBeGreaterThan(1);
  for (let i = 1; i < ticks.length; i++) expect(overlap(ticks[i - 1]!, ticks[i]!), `tick ${i - 1} and ${i} overlap`).toBe(false);
  // a gauge's model string and its cells apart
  for (const g of await classify.getByTestId('budget-gauge').all()) {
    const [model] = await boxes(g.locator('.gauge-model'));
    const [cells] = await boxes(g.locator('.gauge-cells'));
    expect(overlap(model!, cells!)).toBe(false);
  }
  // the flow graph fits too
  const graph = (await boxes(page.getByTestId('flow-graph')))[0]!;
  expect(graph.x + graph.width).toBeLessThanOrEqual(390);
});
