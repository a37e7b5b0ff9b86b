import type { Page, Response } from '@playwright/test';

/**
 * Opens `path` and waits until React has the page (`<html data-hydrated>`): a field filled while the
 * page hydrates can take the text beside its old value, and a change made before can be missed.
 */
export async function openPage(page: Page, path: string): Promise<Response | null> {
  const res = await page.goto(path);
  await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
  return res;
}
