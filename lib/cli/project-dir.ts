// Which project a command works on (DESIGN: "CLI"): --project, then $AQVEN_PROJECT, then ./showcase.
import { resolve } from 'node:path';
import { databaseTarget } from '@/db/client';
import { formatDiagnostic, loadProject } from '@/lib/project';
import { UsageError } from './exit';
import type { CliIo } from './io';

export function resolveProjectDir(opt?: string, env: Record<string, string | undefined> = process.env, cwd: string = process.cwd()): string {
  return resolve(cwd, opt || env.AQVEN_PROJECT || 'showcase');
}

/**
 * The database a command opens: AQVEN_DATABASE_URL, else the SQLite file the project's aqven.yaml
 * names (a project failing check prints its errors and is a UsageError).
 */
export async function commandDatabaseTarget(opts: { project?: string; env?: Record<string, string | undefined> }, io: CliIo): Promise<string> {
  const env = opts.env ?? process.env;
  const url = env.AQVEN_DATABASE_URL?.trim();
  if (url) return url;
  const dir = resolveProjectDir(opts.project, env);
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) {
    for (const d of diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
    throw new UsageError(`the project ${dir} fails aqven check (its aqven.yaml names the database); fix it, or set AQVEN_DATABASE_URL`);
  }
  return databaseTarget(project.databasePath, env);
}
