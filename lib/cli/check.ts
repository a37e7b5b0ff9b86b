// `aqven check [--project DIR] [--json]` (DESIGN: CLI): every diagnostic as
// `file:line:col: error CODE message` plus its hint, then a summary; exit 0 clean, 1 on errors.
// At most 100 errors are listed per file; one E_MORE line counts the rest (also in the summary).
// With a run database holding measured limits (`aqven limits`), W_SCHEMA_LIMIT warnings too.
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { countOf, formatDiagnostic, loadProject, sortDiagnostics, type Diagnostic, type Project } from '@/lib/project';
import { type CliIo, processIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';

export interface CheckOptions {
  project?: string;
  json?: boolean;
  env?: Record<string, string | undefined>;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** W_SCHEMA_LIMIT: the database is read (read-only) only when there may be one, so a bare check loads no SQLite. */
async function limitWarnings(project: Project, env: Record<string, string | undefined>): Promise<Diagnostic[]> {
  if (!env.AQVEN_DATABASE_URL?.trim() && !existsSync(project.databasePath)) return [];
  const { schemaLimitWarnings } = await import('./check-limits');
  return schemaLimitWarnings(project, env);
}

/** Runs the check, writes its report and returns the exit status. */
export async function runCheck(opts: CheckOptions, io: CliIo = processIo): Promise<number> {
  const dir = resolveProjectDir(opts.project, opts.env ?? process.env);
  const env = opts.env ?? process.env;
  const loaded = await loadProject(dir, { env });
  const { project } = loaded;
  const diagnostics = project ? sortDiagnostics([...loaded.diagnostics, ...(await limitWarnings(project, env))]) : loaded.diagnostics;
  // an E_MORE diagnostic stands for the errors of its file that are not listed
  const errors = diagnostics.filter((d) => d.severity === 'error').reduce((n, d) => n + countOf(d), 0);
  const warnings = diagnostics.filter((d) => d.severity === 'warning').length;
  if (opts.json) {
    // the keys of the first version first, so readers of the old shape keep working; path is
    // added, and `omitted` on an E_MORE entry (the errors of its file left out of the list)
    const out = diagnostics.map(({ file, line, col, severity, code, message, hint, path, omitted }: Diagnostic) => ({
      file,
      line,
      col,
      severity,
      code,
      message,
      hint,
      path,
      ...(omitted !== undefined && { omitted }),
    }));
    io.out(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    for (const d of diagnostics) io.out(`${formatDiagnostic(d)}\n`);
    const counts = `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
    io.out(
      project
        ? `✓ ${project.name}: ${plural(Object.keys(project.agents).length, 'agent')}, ${plural(Object.keys(project.flows).length, 'flow')}, ${counts}\n`
        : `✗ ${basename(dir)}: ${counts}\n`,
    );
  }
  return errors > 0 ? 1 : 0;
}

export function registerCheck(program: Command, io: CliIo = processIo): Command {
  return program
    .command('check')
    .description('validate every file of a project: aqven.yaml, providers, agents, flows')
    .option('--project <dir>', PROJECT_HELP)
    .option('--json', 'print the diagnostics as a JSON array')
    .action(async (opts: { project?: string; json?: boolean }) => {
      io.exit(await runCheck(opts, io));
    });
}
