// Accounts, roles and tokens against the real server (DESIGN: The dashboard, "Accounts, roles and
// tokens"): nobody signed in gets the login page or a 401; a viewer browses but cannot change
// anything, even by forcing the form; an API token starts runs until it is revoked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { EDITOR, PASSWORD, VIEWER, aqven, createToken, ensureUser, signIn } from './accounts';
import { e2eProjectDir } from './project-dir';
import { E2E_ORIGIN, waitForRun } from './sim';
import { openPage } from './pages/open';

const SIGNED_OUT = { cookies: [], origins: [] };
const RUN = { flow: 'triage', input: { ticket: 'access: started by a token' } };

test.describe('signed out', () => {
  test.use({ storageState: SIGNED_OUT });

  test('every page sends to the login page, every route handler answers 401', async ({ page, request }) => {
    for (const path of ['/', '/runs', '/runs/no-such-run', '/flows', '/agents', '/agents/classifier', '/providers', '/account']) {
      await openPage(page, path);
      await expect(page, path).toHaveURL(/\/login(\?next=|$)/);
      // the login page is asked to come back to the page ("/" is the runs page)
      expect(new URL(page.url()).searchParams.get('next'), path).toBe(path === '/' ? '/runs' : path);
      await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
    }
    // nothing of the project shows before signing in
    await expect(page.getByRole('navigation', { name: 'Main' })).toHaveCount(0);

    const routes: [string, string][] = [
      ['GET', '/api/runs'],
      ['GET', '/api/runs/no-such-run'],
      ['GET', '/api/runs/no-such-run/detail'],
      ['POST', '/api/runs'],
      ['POST', '/api/sim/scripts'],
    ];
    for (const [method, path] of routes) {
      const res = await request.fetch(path, { method, headers: { Origin: E2E_ORIGIN }, data: method === 'POST' ? { scripts: {} } : undefined });
      expect(res.status(), `${method} ${path}`).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('sign in first');
    }
  });

  test('sign in, see who you are, sign out', async ({ page }) => {
    await openPage(page, '/login');
    await page.getByLabel('Name').fill(EDITOR);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('sign-in-error')).toHaveText('wrong name or password');

    await signIn(page, EDITOR);
    const cookie = (await page.context().cookies()).find((c) => c.name.endsWith('session_token'));
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');

    const beforeSignOut = Date.now();
    await page.getByTestId('sign-out').click();
    await expect(page).toHaveURL(/\/login$/);
    // seen signing out: `aqven user list` keeps it though the session is gone
    const listed = JSON.parse(aqven(['user', 'list', '--json'])) as { name: string; lastSeenAt: string | null }[];
    expect(Date.parse(listed.find((u) => u.name === EDITOR)!.lastSeenAt!)).toBeGreaterThanOrEqual(beforeSignOut);
    await openPage(page, '/flows');
    await expect(page).toHaveURL(/\/login\?next=%2Fflows$/);

    // signing in comes back to the page asked for
    await page.getByLabel('Name').fill(EDITOR);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/flows$/);
  });

  test('through a proxy the server was not told of (AQVEN_TRUST_PROXY unset), nobody signs in: the address is unknown', async ({ browser }) => {
    const context = await browser.newContext({ storageState: SIGNED_OUT, extraHTTPHeaders: { 'X-Forwarded-For': '198.51.100.4' } });
    try {
      const page = await context.newPage();
      await openPage(page, '/login');
      await page.getByLabel('Name').fill(EDITOR);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByTestId('sign-in-error')).toContainText('this dashboard cannot tell which address this sign-in comes from');
      await expect(page).toHaveURL(/\/login$/);
    } finally {
      await context.close();
    }
  });
});

test.describe('a password', () => {
  test.use({ storageState: SIGNED_OUT });

  test('is changed on the Account page; the old one no longer signs in', async ({ page }) => {
    ensureUser('e2e-changer', 'viewer');
    await signIn(page, 'e2e-changer');
    await openPage(page, '/account');
    await expect(page.getByTestId('account-role')).toHaveText('viewer');
    const NEW = 'a brand new passphrase';
    await page.getByLabel('Current password').fill('wrong current password');
    await page.getByLabel('New password (at least 12 characters)').fill(NEW);
    await page.getByLabel('New password again').fill(NEW);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.locator('#pw-error')).toHaveText('the current password is wrong');

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password (at least 12 characters)').fill(NEW);
    await page.getByLabel('New password again').fill(NEW);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('password-changed')).toBeVisible();

    await page.getByTestId('sign-out').click();
    await page.getByLabel('Name').fill('e2e-changer');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('sign-in-error')).toHaveText('wrong name or password');
    await signIn(page, 'e2e-changer', NEW);
  });
});

test.describe('a viewer', () => {
  test.use({ storageState: SIGNED_OUT });

  test('browses runs and policies but has no save button, and a forced save is refused', async ({ page }) => {
    await signIn(page, VIEWER);
    await expect(page.getByTestId('user-menu')).toContainText('viewer');
    await expect(page.getByRole('heading', { name: 'Runs' })).toBeVisible();
    // no button that leads to a form a viewer may not use
    await expect(page.getByRole('link', { name: 'Start a run' })).toHaveCount(0);

    await openPage(page, '/flows');
    await expect(page.getByTestId('start-run-form')).toHaveCount(0);
    await expect(page.getByTestId('read-only').first()).toBeVisible();

    const file = join(e2eProjectDir(), 'agents', 'classifier.yaml');
    const before = readFileSync(file, 'utf8');
    await openPage(page, '/agents/classifier');
    await expect(page.getByRole('button', { name: 'Save policy' })).toHaveCount(0);
    await expect(page.getByLabel('Retries', { exact: true })).toBeDisabled();

    // force it: enable the form and submit it anyway — the server action checks the role itself
    await page.evaluate(() => {
      const form = document.querySelector('form.policy-form') as HTMLFormElement;
      form.querySelector('fieldset')!.disabled = false;
      (form.querySelector('input[name="retries"]') as HTMLInputElement).value = '1';
      form.requestSubmit();
    });
    await expect(page.locator('[data-code="E_FORBIDDEN"]')).toContainText('your role (viewer) may not do this');
    expect(readFileSync(file, 'utf8')).toBe(before);

    // and through the API with the viewer's own session
    const res = await page.request.post('/api/runs', { data: RUN, headers: { Origin: E2E_ORIGIN } });
    expect(res.status()).toBe(403);
  });
});

async function startWith(request: APIRequestContext, token: string) {
  return request.post('/api/runs', { data: RUN, headers: { Authorization: `Bearer ${token}` } });
}

test.describe('API tokens', () => {
  test.use({ storageState: SIGNED_OUT });

  test('an editor token starts a run recorded as the token; revoked, it gets 401; a viewer token gets 403', async ({ request }) => {
    const token = createToken('e2e-service', 'editor');
    const started = await startWith(request, token);
    expect(started.status(), await started.text()).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const read = await request.get(`/api/runs/${id}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(read.status()).toBe(200);
    expect(((await read.json()) as { startedBy?: string }).startedBy).toBe('token:e2e-service');
    await waitForRun(request, id, { Authorization: `Bearer ${token}` });

    const listed = JSON.parse(aqven(['token', 'list', '--json'])) as { name: string; lastUsedAt: string | null }[];
    expect(Date.parse(listed.find((t) => t.name === 'e2e-service')?.lastUsedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);

    aqven(['token', 'revoke', 'e2e-service']);
    expect((await startWith(request, token)).status()).toBe(401);
    expect((await startWith(request, 'aqven_not-a-token-at-all-000000000000')).status()).toBe(401);

    const viewerToken = createToken('e2e-reader', 'viewer');
    expect((await startWith(request, viewerToken)).status()).toBe(403);
    expect((await request.get('/api/runs', { headers: { Authorization: `Bearer ${viewerToken}` } })).status()).toBe(200);
  });

  test('POST /api/runs is limited per caller: 429 with Retry-After', async ({ request }) => {
    const token = createToken('e2e-burst', 'editor');
    const limit = Number(process.env.E2E_RUNS_PER_MINUTE ?? 40);
    // an unknown flow is refused (404) after it is counted: no run is started by this test
    for (let i = 0; i < limit; i++) {
      const res = await request.post('/api/runs', { data: { flow: 'no-such-flow', input: {} }, headers: { Authorization: `Bearer ${token}` } });
      expect(res.status()).toBe(404);
    }
    const over = await request.post('/api/runs', { data: { flow: 'no-such-flow', input: {} }, headers: { Authorization: `Bearer ${token}` } });
    expect(over.status()).toBe(429);
    expect(Number(over.headers()['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(((await over.json()) as { error: string }).error).toContain('too many runs started');
  });
});
