// Which project the dashboard serves, and whether providers are simulated (DESIGN: The provider
// simulator).
import 'server-only';
import { basename, resolve } from 'node:path';
import { simulateRequested } from '@/lib/flow/simulate';

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
    simulate: simulateRequested(),
  };
}
