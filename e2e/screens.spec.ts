import { expect, test } from '@playwright/test';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { openPage } from './pages/open';

test.afterEach(async ({ request }) => resetScripts(request));

// The rule for every page: it fits a 1280 px screen and a 390 px phone without sideways scrolling
// (wide tables scroll inside their own box).
test('every page fits a 1280 px screen and a 390 px phone', async ({ page, request }) => {
  // a run with a fallback, an unrecognised finish reason and a long model string to lay out
  await loadScripts(request, { [GEMINI]: [{ kind: 'provider_error', variant: 'finish_error' }], [GPT]: [{ kind: 'ok', finish_reason: 'eos' }] });
  const run = await runToEnd(request, 'triage', { ticket: 'screens: a run to lay out' });
  const paths = ['/runs', `/runs/${run.id}`, '/flows', '/agents', '/agents/classifier', '/providers'];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const path of paths) {
      await openPage(page, path);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      const extra = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(extra, `${path} at ${width} px is wider than the screen by ${extra} px`).toBeLessThanOrEqual(0);
    }
  }
});
