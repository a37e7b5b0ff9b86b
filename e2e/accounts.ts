// The e2e server's accounts (DESIGN: The dashboard, "Accounts, roles and tokens"): made with the
// `aqven` command against the served project's database, as a team's admin would. Every spec runs
// signed in as EDITOR (storage state written by auth.setup.ts, one per server) unless it signs in itself.
import { spawnSync } from 'node:child_process';
import type { Page } from '@playwright/test';
import { expect } from '@playwright/test';
import { E2E_SERVER, e2eProjectDir } from './project-dir';
import { openPage } from './pages/open';

export const PASSWORD = 'e2e password, long enough';
export const EDITOR = 'e2e-editor';
export const VIEWER = 'e2e-viewer';
export const ADMIN = 'e2e-admin';

/** Runs `aqven ARGS --project <the e2e project of this worker's server>`; its stdout, or a failed expectation with stderr. */
export function aqven(args: string[], stdin?: string, server = E2E_SERVER): string {
  const r = spawnSync(process.execPath, ['bin/aqven.mjs', ...args, '--project', e2eProjectDir(server)], { input: stdin, encoding: 'utf8' });
  expect(r.status, `aqven ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

type Role = 'viewer' | 'editor' | 'admin';

/** Creates each user unless it exists (a re-run against the same server). */
export function ensureUsers(users: [name: string, role: Role][], server = E2E_SERVER): void {
  const list = JSON.parse(aqven(['user', 'list', '--json'], undefined, server)) as { name: string }[];
  for (const [name, role] of users) if (!list.some((u) => u.name === name)) aqven(['user', 'add', name, '--role', role, '--password-stdin'], `${PASSWORD}\n`, server);
}

export function ensureUser(name: string, role: Role, server = E2E_SERVER): void {
  ensureUsers([[name, role]], server);
}

/** Creates an API token and answers it (shown once by the command). */
export function createToken(name: string, role: Role): string {
  const out = aqven(['token', 'create', name, '--role', role]);
  const token = /aqven_[A-Za-z0-9_-]{20,}/.exec(out)?.[0];
  expect(token, out).toBeTruthy();
  return token!;
}

/** Signs in through the login form and waits for the runs page. */
export async function signIn(page: Page, name: string, password = PASSWORD): Promise<void> {
  await openPage(page, '/login');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/runs$/);
  await expect(page.getByTestId('user-menu')).toContainText(name);
}
