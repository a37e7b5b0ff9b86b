// After the dashboard writes a project file (the agent policy form), the server session must run
// the next flow with the project as it is now. The session object is shared by every request of
// the process, so its project (and the providers derived from it) is swapped in place; runs
// already going keep the project they started with. SQLite mode: the folder is loaded again.
// PostgreSQL mode: the session moves to the newest snapshot (DESIGN: Storage, "The project in the
// database").
import 'server-only';
import { ProjectInvalidError, refreshSession } from '@/lib/flow/session';
import { routeToSimulator } from '@/lib/flow/simulate';
import { loadProject, type Diagnostic } from '@/lib/project';
import { serverSession } from './session';

export type ReloadResult = { ok: true } | { ok: false; diagnostics: Diagnostic[] };

export async function reloadProject(): Promise<ReloadResult> {
  const s = await serverSession();
  if (s.snapshotId !== null) {
    try {
      await refreshSession(s);
      return { ok: true };
    } catch (err) {
      if (err instanceof ProjectInvalidError) return { ok: false, diagnostics: err.diagnostics.filter((d) => d.severity === 'error') };
      throw err;
    }
  }
  const { project, diagnostics } = await loadProject(s.project.dir);
  if (!project) return { ok: false, diagnostics: diagnostics.filter((d) => d.severity === 'error') };
  s.project = project;
  if (s.simulated) {
    const routed = routeToSimulator(project, s.simulated.sim);
    s.providers = routed.providers;
    s.env = routed.env;
  } else {
    s.providers = project.providers;
  }
  return { ok: true };
}
