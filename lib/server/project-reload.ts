// After the dashboard writes a project file (the agent policy form), the server session must run
// the next flow with the project as it is now. The session object is shared by every request of
// the process, so it is brought up to date in place (refreshSession, the same step startRun takes
// before each run); runs already going keep the project they started with. SQLite mode: the folder
// is loaded again when its files changed. PostgreSQL mode: the session moves to the newest snapshot
// (DESIGN: Storage, "The project in the database", "The project folder in a long-lived process").
import 'server-only';
import { ProjectInvalidError, refreshSession } from '@/lib/flow/session';
import type { Diagnostic } from '@/lib/project';
import { serverSession } from './session';

export type ReloadResult = { ok: true } | { ok: false; diagnostics: Diagnostic[] };

export async function reloadProject(): Promise<ReloadResult> {
  const s = await serverSession();
  try {
    await refreshSession(s);
    return { ok: true };
  } catch (err) {
    if (err instanceof ProjectInvalidError) return { ok: false, diagnostics: err.diagnostics.filter((d) => d.severity === 'error') };
    throw err;
  }
}
