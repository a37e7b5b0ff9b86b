// Before every spec: on each worker's server the accounts exist, and the editor's signed-in browser
// state is saved for the specs on that server to start from (a session is one server's: its database).
import { test as setup } from '@playwright/test';
import { ADMIN, EDITOR, VIEWER, ensureUsers, signIn } from './accounts';
import { E2E_WORKERS, editorState, originOf } from './project-dir';

for (let server = 0; server < E2E_WORKERS; server++) {
  setup(`accounts exist on server ${server} and its editor is signed in`, async ({ browser }) => {
    // four `aqven` processes (about 2 s each on a quiet machine), beside the other server's setup
    setup.setTimeout(180_000);
    ensureUsers(
      [
        [ADMIN, 'admin'],
        [EDITOR, 'editor'],
        [VIEWER, 'viewer'],
      ],
      server,
    );
    const context = await browser.newContext({ baseURL: originOf(server) });
    try {
      await signIn(await context.newPage(), EDITOR);
      await context.storageState({ path: editorState(server) });
    } finally {
      await context.close();
    }
  });
}
