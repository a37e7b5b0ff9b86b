// Which project a command works on (DESIGN: "CLI"): --project, then $AQVEN_PROJECT, then ./showcase.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { databaseTarget, databaseUrl } from '@/db/client';
import { formatDiagnostic, loadProject } from '@/lib/project';
import { UsageError } from './exit';
import type { CliIo } from './io';

/** --project's default as every command's help says it: the order resolveProjectDir follows */
export const PROJECT_DEFAULT = 'default $AQVEN_PROJECT, then ./showcase';
/** the help of --project for a command that reads the project */
export const PROJECT_HELP = `project folder (${PROJECT_DEFAULT})`;
/** the help of --project for a command that opens the run database (commandDatabaseTarget) */
export const PROJECT_OPTION = `project folder naming the SQLite database (${PROJECT_DEFAULT}); AQVEN_DATABASE_URL wins`;

/** Whether `path` is there and is no folder (unreadable or missing: left to the loader, which says why). */
function isNoFolder(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The project folder, absolute. Refused (UsageError, exit 2): an empty --project (it would
 * silently mean the default), and a path that is a file (or anything but a folder). A folder not there yet is
 * left to the command (loading it says there is no aqven.yaml).
 */
export function resolveProjectDir(opt?: string, env: Record<string, string | undefined> = process.env, cwd: string = process.cwd()): string {
  if (opt !== undefined && opt.trim() === '') throw new UsageError('--project is empty: give the project folder (or leave --project out for $AQVEN_PROJECT, then ./showcase)');
  const [given, from] = opt ? [opt, '--project'] : env.AQVEN_PROJECT ? [env.AQVEN_PROJECT, 'AQVEN_PROJECT'] : ['showcase', 'the default project'];
  const dir = resolve(cwd, given);
  if (isNoFolder(dir)) throw new UsageError(`${from} ${dir} is not a folder: give the project folder (the one holding aqven.yaml)`);
  return dir;
}

/**
 * The database a command opens: AQVEN_DATABASE_URL, else the SQLite file the project's aqven.yaml
 * names (a project failing check prints its errors and is a UsageError).
 */
export async function commandDatabaseTarget(opts: { project?: string; env?: Record<string, string | undefined> }, io: CliIo): Promise<string> {
  const env = opts.env ?? process.env;
  const url = databaseUrl(env);
  if (url) return url;
  const dir = resolveProjectDir(opts.project, env);
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) {
    for (const d of diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
    throw new UsageError(`the project ${dir} fails aqven check (its aqven.yaml names the database); fix it, or set AQVEN_DATABASE_URL`);
  }
  return databaseTarget(project.databasePath, env);
}
