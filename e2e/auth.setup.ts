// Before every spec: the accounts exist, and the editor's signed-in browser state is saved for
// the specs to start from.
import { test as setup } from '@playwright/test';
import { ADMIN, EDITOR, EDITOR_STATE, VIEWER, ensureUser, signIn } from './accounts';

setup('accounts exist and the editor is signed in', async ({ page }) => {
  ensureUser(ADMIN, 'admin');
  ensureUser(EDITOR, 'editor');
  ensureUser(VIEWER, 'viewer');
  await signIn(page, EDITOR);
  await page.context().storageState({ path: EDITOR_STATE });
});
