// The audit trail in a real browser (DESIGN: The dashboard, "Audit trail"): an admin signs in,
// saves an agent policy, and finds both on /audit with their actor — filtered by kind, at 1280 px
// and on a 390 px phone with nothing to scroll sideways; an editor and a viewer are refused the
// page and never see its link.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { ADMIN, EDITOR, VIEWER, signIn } from './accounts';
import { AgentPage } from './pages/agent-page';
import { openPage } from './pages/open';
import { e2eProjectDir } from './project-dir';
import { shoot } from './pages/shoot';

const SIGNED_OUT = { cookies: [], origins: [] };
/** an agent no other spec edits: its revisions are this spec's own */
const AGENT = 'gpt';

const row = (page: Page, kind: string, actor: string) => page.locator(`[data-testid="audit-row"][data-kind="${kind}"][data-actor="${actor}"]`);
const auditLink = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' });

test.describe('the audit trail', () => {
  test.use({ storageState: SIGNED_OUT });

  test('an admin signs in, saves a policy, and sees both on /audit with their actor', async ({ page }, testInfo) => {
    const file = join(e2eProjectDir(), 'agents', `${AGENT}.yaml`);
    const shipped = readFileSync(file, 'utf8');
    try {
      await signIn(page, ADMIN);
      await expect(auditLink(page)).toBeVisible();

      const agent = new AgentPage(page);
      await agent.goto(AGENT);
      const retries = Number(await agent.field('Retries').inputValue());
      await agent.field('Retries').fill(String(retries === 2 ? 3 : 2));
      await agent.save();
      await expect(agent.saveStatus()).toHaveText(/Saved as revision \d+/, { timeout: 30_000 });

      await auditLink(page).click();
      await expect(page).toHaveURL(/\/audit$/);
      await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
      await expect(page.getByRole('heading', { level: 1, name: 'Audit' })).toBeVisible();
      // newest first: the save above the sign-in, each with the admin as actor and where it came from
      const saved = row(page, 'policy.saved', ADMIN).first();
      await expect(saved).toContainText(AGENT);
      await expect(saved).toContainText('policy saved');
      await expect(saved.getByTestId('audit-actor')).toHaveText(ADMIN);
      await expect(saved.locator('.c-address')).toHaveText('127.0.0.1');
      const signedIn = row(page, 'sign-in.ok', ADMIN).first();
      await expect(signedIn).toBeVisible();
      const kinds = await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
      expect(kinds.indexOf('policy.saved')).toBeLessThan(kinds.indexOf('sign-in.ok'));

      // filtered by kind: the URL says so, and only that kind is listed
      await page.getByLabel('Kind').selectOption('policy.saved');
      await expect(page).toHaveURL(/\/audit\?kind=policy\.saved$/);
      await expect(page.getByTestId('audit-row').first()).toHaveAttribute('data-kind', 'policy.saved');
      expect(new Set(await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind'))))).toEqual(new Set(['policy.saved']));
      await page.getByLabel('Actor').selectOption(ADMIN);
      await expect(page).toHaveURL(/\/audit\?actor=e2e-admin&kind=policy\.saved$/);
      await expect(row(page, 'policy.saved', ADMIN).first()).toBeVisible();

      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await openPage(page, '/audit');
        await expect(row(page, 'sign-in.ok', ADMIN).first()).toBeVisible();
        // nothing to scroll sideways: not the page, not the table
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
        const table = page.locator('.table-scroll').first();
        expect(await table.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
        await shoot(page, testInfo, `audit-${width}.png`);
      }
    } finally {
      // the showcase's agent as shipped, for the specs after this one
      writeFileSync(file, shipped);
    }
  });

  for (const [who, role] of [
    [EDITOR, 'editor'],
    [VIEWER, 'viewer'],
  ] as const) {
    test(`${role === 'editor' ? 'an editor' : 'a viewer'} is refused /audit and has no Audit link`, async ({ page }) => {
      await signIn(page, who);
      await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' })).toBeVisible();
      await expect(auditLink(page)).toHaveCount(0);
      await openPage(page, '/audit');
      await expect(page).toHaveURL(/\/runs$/);
      await expect(page.getByTestId('audit-row')).toHaveCount(0);
    });
  }
});
