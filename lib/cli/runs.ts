// `aqven runs`, `aqven search`, `aqven show` (DESIGN: CLI): the run history, read. Exit statuses: 0,
// 1 no such run (show), 2 bad usage or a project that fails check, 3 the database cannot be read;
// `show --follow` exits as `aqven run` does when the run ends (lib/cli/follow.ts).
// Everything they say goes through their CliIo.
import type { Command } from 'commander';
import { closeDatabase, databaseTarget, openDatabase } from '@/db/client';
import { listRuns } from '@/db/queries';
import { SEARCH_PAGE_MAX, searchHistory } from '@/db/search-queries';
import type { Db } from '@/db/types';
import { getRunRecord } from '@/lib/flow/stored-run';
import { parseRunFilters, RUN_RANGES } from '@/lib/dashboard/run-filters';
import { RUN_STATUSES } from '@/lib/dashboard/run-status';
import { formatDiagnostic, loadProject } from '@/lib/project';
import { ATTEMPT_CAUSES, RUN_KINDS } from '@/lib/shared/run-list-values';
import { EXIT_USAGE, exitFor, UsageError } from './exit';
import { cliRunId, formatSearchPage } from './find-runs';
import { followShown, type FollowCommandOptions } from './follow';
import { formatRun, formatRunList } from './format-run';
import { processIo, type CliIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';

/** Reads the project's run history with `read`, then closes the database (a PostgreSQL pool would keep the process alive). */
async function withProjectDb<T>(dirOpt: string | undefined, io: CliIo, read: (db: Db) => Promise<T>): Promise<T> {
  const { project, diagnostics } = await loadProject(resolveProjectDir(dirOpt));
  if (!project) {
    for (const d of diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
    throw new UsageError('the project fails aqven check');
  }
  const db = await openDatabase(databaseTarget(project.databasePath));
  try {
    return await read(db);
  } finally {
    await closeDatabase(db);
  }
}

/** A read command's body, its known failures as one line and an exit status (exitFor). */
async function reading(command: string, io: CliIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    return exitFor(err, (text) => io.err(`aqven ${command}: ${text}\n`), [[[UsageError], EXIT_USAGE]]);
  }
}

/** `aqven runs`' options: the run list's query parameters (lib/dashboard/run-filters.ts), as commander reads them */
export type RunsOptions = Partial<Record<'status' | 'flow' | 'agent' | 'model' | 'cause' | 'kind' | 'range' | 'from' | 'to', string>> & {
  project?: string;
  limit: string;
  retried?: boolean;
  fellBack?: boolean;
  json?: boolean;
};

export function runRunsCommand(opts: RunsOptions, io: CliIo = processIo): Promise<number> {
  return reading('runs', io, async () => {
    const { project, json, retried, fellBack, ...params } = opts;
    const parsed = parseRunFilters({ ...params, retried: retried ? '1' : undefined, fell_back: fellBack ? '1' : undefined });
    if (!parsed.ok) throw new UsageError(`--${parsed.param.replace('_', '-')} ${parsed.reason}`);
    const filtered = Object.values(parsed.filters).some((v) => v !== undefined);
    const { items } = await withProjectDb(project, io, (db) => listRuns(db, { filters: parsed.filters, limit: parsed.limit }));
    io.out(json ? `${JSON.stringify(items, null, 2)}\n` : `${items.length || !filtered ? formatRunList(items) : 'no runs match'}\n`);
    return 0;
  });
}

export function runSearchCommand(words: string[], opts: { project?: string; limit: string; before?: string; json?: boolean }, io: CliIo = processIo): Promise<number> {
  return reading('search', io, async () => {
    const limit = Number(opts.limit);
    const before = opts.before === undefined ? null : Number(opts.before);
    if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_PAGE_MAX || (before !== null && !Number.isSafeInteger(before))) {
      throw new UsageError(`--limit must be a whole number from 1 to ${SEARCH_PAGE_MAX}, --before a whole number`);
    }
    const page = await withProjectDb(opts.project, io, (db) => searchHistory(db, { q: words.join(' '), limit, before }));
    io.out(opts.json ? `${JSON.stringify(page, null, 2)}\n` : `${formatSearchPage(page)}\n`);
    return 0;
  });
}

export type ShowOptions = { project?: string; json?: boolean; follow?: boolean } & Omit<FollowCommandOptions, 'json'>;

/** `aqven show ID`: the run as stored (exit 0); with `--follow`, followed to its end (lib/cli/follow.ts: the exit status of its end). */
export function runShowCommand(runId: string, opts: ShowOptions, io: CliIo = processIo): Promise<number> {
  return reading('show', io, async () => {
    const found = await withProjectDb(opts.project, io, async (db) => {
      const named = await cliRunId(db, 'show', runId);
      if (named.ok && opts.follow) return { named, record: null, followed: await followShown(db, named.id, opts, io) };
      return { named, record: named.ok ? await getRunRecord(db, named.id) : null, followed: null };
    });
    if (found.followed !== null) return found.followed;
    if (!found.named.ok || !found.record) {
      io.err(`${found.named.ok ? `aqven show: no run with id ${runId}` : found.named.message}\n`);
      return found.named.ok ? 1 : found.named.exitCode;
    }
    io.out(opts.json ? `${JSON.stringify(found.record, null, 2)}\n` : `${formatRun(found.record)}\n`);
    return 0;
  });
}

export function registerRuns(program: Command, io: CliIo = processIo): void {
  program
    .command('runs')
    .description("list recent runs, newest first; the filters are those of the dashboard's run list")
    .option('--project <dir>', PROJECT_HELP)
    .option('--status <status>', `only runs with this status (${RUN_STATUSES.join(', ')})`)
    .option('--flow <name>', 'only runs of this flow')
    .option('--agent <name>', 'only runs in which a node of this agent ran')
    .option('--model <model>', 'only runs with an attempt on this model (provider:model)')
    .option('--cause <cause>', `only runs with an attempt that failed this way (${ATTEMPT_CAUSES.join(', ')})`)
    .option('--kind <kind>', `only runs of this kind (${RUN_KINDS.join(', ')}); default every kind`)
    .option('--retried', 'only runs with an attempt retried or repaired')
    .option('--fell-back', 'only runs that fell back to another model')
    .option('--range <range>', `only runs started in the last ${Object.keys(RUN_RANGES).join(', ')}`)
    .option('--from <time>', 'only runs started at or after (ISO 8601 with a zone, or epoch milliseconds)')
    .option('--to <time>', 'only runs started at or before (same forms)')
    .option('--limit <n>', 'how many (1-500)', '20')
    .option('--json', 'print JSON')
    .action(async (opts: RunsOptions) => io.exit(await runRunsCommand(opts, io)));

  program
    .command('search')
    .description('search run inputs, node outputs and failure text (and run ids by prefix), newest first')
    .argument('<words...>', 'words that must all be there; word* for a prefix')
    .option('--project <dir>', PROJECT_HELP)
    .option('--limit <n>', `hits per page (1-${SEARCH_PAGE_MAX})`, '20')
    .option('--before <n>', 'older text: the "next" of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (words: string[], opts: { project?: string; limit: string; before?: string; json?: boolean }) => io.exit(await runSearchCommand(words, opts, io)));

  program
    .command('show')
    .description('show one run')
    .argument('<runId>', 'run id, its short id (the 8 characters shown for a run), or a prefix of 4 or more')
    .option('--project <dir>', PROJECT_HELP)
    .option('--json', 'print the run record as JSON')
    .option(
      '--follow',
      "follow a queued or running run to its end (aqven run's progress on a terminal), then print it; exit as aqven run: 0 succeeded, 1 otherwise; Ctrl-C stops following, not the run",
    )
    .action(async (runId: string, opts: { project?: string; json?: boolean; follow?: boolean }) => io.exit(await runShowCommand(runId, opts, io)));
}
