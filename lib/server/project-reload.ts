// After the dashboard writes a project file (the agent policy form), the server session must run
// the next flow with what is on disk now. The session object is shared by every request of the
// process, so its project (and the providers derived from it) is swapped in place; runs already
// going keep the project they started with.
import 'server-only';
import { routeToSimulator } from '@/lib/flow/simulate';
import { loadProject, type Diagnostic } from '@/lib/project';
import { serverSession } from './session';

export type ReloadResult = { ok: true } | { ok: false; diagnostics: Diagnostic[] };

export async function reloadProject(): Promise<ReloadResult> {
  const s = await serverSession();
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
