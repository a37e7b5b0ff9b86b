// Which project the dashboard serves, and whether providers are simulated (DESIGN.md §13).
import 'server-only';
import { basename, resolve } from 'node:path';

export interface DashboardContext {
  projectDir: string;
  projectName: string;
  simulate: boolean;
}

export function dashboardContext(): DashboardContext {
  const projectDir = resolve(/*turbopackIgnore: true*/ process.env.AQVEN_PROJECT || 'showcase');
  return {
    projectDir,
    projectName: basename(projectDir),
    simulate: process.env.AQVEN_SIMULATE === '1' || process.env.AQVEN_SIMULATE === 'true',
  };
}
