import { expect, test } from '@playwright/test';
import { openPage } from './pages/open';

test('the dashboard opens on runs and navigates to every section', async ({ page }) => {
  await openPage(page, '/');
  await expect(page).toHaveURL(/\/runs$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Runs' })).toBeVisible();
  await expect(page.getByTestId('sim-badge')).toHaveText('simulated providers');
  for (const name of ['Flows', 'Agents', 'Providers', 'Runs']) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
    await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
    await expect(page.getByRole('link', { name })).toHaveAttribute('aria-current', 'page');
  }
});
