// One place that turns a project folder into what a run needs: the checked project, its
// database, and its providers (real, or routed to the simulator). The CLI, the dashboard's
// server and the tests all start runs through here.
import { openDb, type Db } from '@/db/client';
import { countRuns } from '@/db/queries';
import type { ResolvedProvider } from '@/lib/engine/types';
import { loadProject, type Diagnostic, type Project } from '@/lib/project';
import { simulateProject, type SimulatedProviders } from './simulate';

export class ProjectInvalidError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super(`the project fails aqven check with ${errors.length} error(s); run \`aqven check\` to see them`);
    this.name = 'ProjectInvalidError';
  }
}

export interface Session {
  project: Project;
  db: Db;
  providers: Record<string, ResolvedProvider>;
  env: Record<string, string | undefined>;
  simulated: SimulatedProviders | null;
  /** `aqven check` warnings (e.g. W_API_KEY); empty when simulated, where keys are not needed */
  warnings: Diagnostic[];
  close(): Promise<void>;
}

export async function openSession(dir: string, opts: { simulate?: boolean } = {}): Promise<Session> {
  const { project, diagnostics } = await loadProject(dir);
  if (!project) throw new ProjectInvalidError(diagnostics);
  const db = openDb(project.databasePath);
  // each CLI process starts its own simulator: offset the chaos seed by the runs already stored
  const simulated = opts.simulate ? await simulateProject(project, { seedOffset: await countRuns(db) }) : null;
  return {
    project,
    db,
    providers: simulated?.providers ?? project.providers,
    env: simulated?.env ?? process.env,
    simulated,
    warnings: simulated ? [] : diagnostics.filter((d) => d.severity === 'warning'),
    close: async () => {
      await simulated?.close();
    },
  };
}
