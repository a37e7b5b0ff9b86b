// Screenshots of the pages a spec has checked, for a person to look at (DESIGN: Tests, "Browser
// tests"): nothing reads them, so they are taken only when asked, `E2E_SHOTS=1 npx playwright test`,
// and land in test-results/<the test>/.
import type { Locator, Page, TestInfo } from '@playwright/test';

const SHOTS = process.env.E2E_SHOTS === '1';

/**
 * Saves a screenshot of `target` as `name` in the test's output folder when E2E_SHOTS=1: of a page,
 * the whole scrolled page unless `fullPage: false`; of a locator, that element.
 */
export async function shoot(target: Page | Locator, testInfo: Pick<TestInfo, 'outputPath'>, name: string, o: { fullPage?: boolean } = {}): Promise<void> {
  if (!SHOTS) return;
  const path = testInfo.outputPath(name);
  if ('goto' in target) await target.screenshot({ path, fullPage: o.fullPage ?? true });
  else await target.screenshot({ path });
}
