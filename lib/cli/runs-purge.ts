// `aqven runs purge [--older-than 90d] [--project DIR] [--dry-run] [--json]` (DESIGN: CLI; Storage,
// "Retention"): deletes the runs started longer ago than the period — `--older-than`, else the
// project's `retention:` in aqven.yaml — with everything stored under them, and the daily sums of
// the days wholly before the cutoff; says what it deleted and what became of the space. Exit
// statuses: 0 done, 2 bad usage (no period, a period that is not one, a project failing check),
// 3 the database cannot be opened.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { closeDatabase, databaseUrl, openDatabase } from '@/db/client';
import { databaseExists, describeTarget } from '@/db/command-database';
import { purgeRuns, purgeSpaceLine, PURGE_BATCH, type PurgeResult } from '@/db/purge';
import { formatDiagnostic, formatDuration, loadProject, parseDuration } from '@/lib/project';
import { RETENTION_HINT } from '@/lib/project/duration';
import { EXIT_USAGE, UsageError, exitFor } from './exit';
import { type CliIo, processIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';

type Env = Record<string, string | undefined>;

export interface RunsPurgeOptions {
  project?: string;
  /** "90d", "12h" …; absent: the project's `retention` */
  olderThan?: string;
  dryRun?: boolean;
  json?: boolean;
  /** runs per transaction */
  batch?: string;
  env?: Env;
  /** the clock (tests) */
  now?: number;
}

const TABLE_ROWS: [keyof PurgeResult['deleted'], string][] = [
  ['runs', 'runs'],
  ['nodeRuns', 'node_runs'],
  ['attempts', 'attempts'],
  ['transportTries', 'transport_tries'],
  ['streamChunks', 'stream_chunks'],
  ['notes', 'notes'],
  ['searchDocs', 'search_docs'],
  ['agentDaily', 'agent_daily'],
  ['nodeDaily', 'node_daily'],
  ['failureDaily', 'failure_daily'],
  ['replayBatches', 'replay_batches'],
  ['auditEvents', 'audit_events'],
  ['idempotencyKeys', 'idempotency_keys'],
];

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** the units a period is written in: `m` is minutes, never months */
const PERIOD_UNITS = 'units: d days, h hours, m minutes, s seconds, ms';

/** the longest period: a cutoff further back is no date a run was started on (99999999d would print the year -271764) */
export const MAX_PERIOD_DAYS = 36_525;

/** The period in ms from `--older-than` or the project's setting; a UsageError says what is missing or wrong. */
function period(opts: RunsPurgeOptions, retentionMs: number | undefined, dir: string): { ms: number; text: string } {
  const bounded = (ms: number, what: string) => {
    if (ms > MAX_PERIOD_DAYS * 86_400_000)
      throw new UsageError(`${what} is longer than 100 years (${MAX_PERIOD_DAYS}d), the longest period a run may be kept; nothing was deleted`);
    return ms;
  };
  if (opts.olderThan !== undefined) {
    const ms = parseDuration(opts.olderThan, { days: true });
    if (ms === null || ms <= 0) throw new UsageError(`--older-than "${opts.olderThan}" is not a period: ${RETENTION_HINT} (${PERIOD_UNITS})`);
    return { ms: bounded(ms, `--older-than ${opts.olderThan.trim()}`), text: opts.olderThan.trim() };
  }
  if (retentionMs === undefined) {
    throw new UsageError(`say how old a run must be to go: --older-than 90d, or \`retention: 90d\` in ${resolve(dir, 'aqven.yaml')} (nothing was deleted)`);
  }
  bounded(retentionMs, `retention: in ${resolve(dir, 'aqven.yaml')}`);
  return { ms: retentionMs, text: retentionMs % 86_400_000 === 0 ? `${retentionMs / 86_400_000}d` : formatDuration(retentionMs) };
}

function formatResult(r: PurgeResult, where: string, olderThan: string, space: string): string {
  const lines = [
    `${r.dryRun ? 'Would delete' : 'Deleted'} the runs started before ${utc(r.cutoff)} (older than ${olderThan}) from ${where}${r.dryRun ? ' — a dry run: nothing was deleted' : ''}:`,
  ];
  const width = Math.max(...TABLE_ROWS.map(([, t]) => t.length));
  for (const [key, table] of TABLE_ROWS) lines.push(`  ${table.padEnd(width)}  ${r.deleted[key].toLocaleString('en-US').padStart(9)}`);
  lines.push(`  (daily sums: the days up to ${utc(Math.floor(r.cutoff / 86_400_000) * 86_400_000 - 1).slice(0, 10)})`);
  if (r.keptLive)
    lines.push(
      `Kept ${r.keptLive.toLocaleString('en-US')} run${r.keptLive === 1 ? '' : 's'} started before the cutoff that ${r.keptLive === 1 ? 'is' : 'are'} still queued or running.`,
    );
  lines.push(space);
  return `${lines.join('\n')}\n`;
}

export async function runRunsPurge(opts: RunsPurgeOptions, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  const say = (text: string) => io.err(`aqven runs purge: ${text}\n`);
  try {
    const batch = opts.batch === undefined ? PURGE_BATCH : Number(opts.batch);
    if (!Number.isInteger(batch) || batch < 1 || batch > 5000) throw new UsageError(`--batch must be a whole number from 1 to 5000, got "${opts.batch}"`);
    const dir = resolveProjectDir(opts.project, env);
    const url = databaseUrl(env);
    // a bad flag is said before the project is read
    if (opts.olderThan !== undefined) period(opts, undefined, dir);
    const { project, diagnostics } = await loadProject(dir, { env });
    if (!project && (!url || opts.olderThan === undefined)) {
      for (const d of diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
      throw new UsageError(`the project ${dir} fails aqven check (its aqven.yaml names the database and the retention); fix it${url ? ', or pass --older-than' : ''}`);
    }
    const { ms, text } = period(opts, project?.retentionMs, dir);
    const target = url || project!.databasePath;
    const { where } = describeTarget(target);
    const cutoff = (opts.now ?? Date.now()) - ms;
    if (!databaseExists(target)) {
      io.out(
        opts.json ? `${JSON.stringify({ database: where, olderThan: text, cutoff, nothing: 'no database yet' })}\n` : `Nothing to delete: there is no database at ${where} yet.\n`,
      );
      return 0;
    }
    const db = await openDatabase(target);
    try {
      const progress = !opts.json && process.stderr.isTTY && io === processIo ? (n: number) => void process.stderr.write(`\r${n.toLocaleString('en-US')} runs…`) : null;
      const result = await purgeRuns(db, { cutoff, dryRun: opts.dryRun, batch, between: (soFar) => progress?.(soFar.runs) });
      if (progress) process.stderr.write('\r');
      io.out(opts.json ? `${JSON.stringify({ database: where, olderThan: text, ...result }, null, 2)}\n` : formatResult(result, where, text, purgeSpaceLine(db, result)));
    } finally {
      await closeDatabase(db);
    }
    return 0;
  } catch (err) {
    return exitFor(err, say, [[[UsageError], EXIT_USAGE]]);
  }
}

/** `aqven runs purge`, under the `runs` command (made here when it is not there yet). */
export function registerRunsPurge(program: Command, io: CliIo = processIo): Command {
  const runs = program.commands.find((c) => c.name() === 'runs') ?? program.command('runs').description('the run history');
  return runs
    .command('purge')
    .description('delete the runs started longer ago than a period (--older-than, else aqven.yaml `retention`), with all they hold')
    .option('--older-than <period>', `e.g. 90d, 30d, 12h, 45m (${PERIOD_UNITS}; at most ${MAX_PERIOD_DAYS}d; default: aqven.yaml retention)`)
    .option('--project <dir>', `${PROJECT_HELP}; AQVEN_DATABASE_URL names the database when set`)
    .option('--dry-run', 'count what would be deleted; delete nothing')
    .option('--json', 'print JSON')
    .option('--batch <n>', `runs deleted per transaction (default ${PURGE_BATCH})`)
    .action(async (_opts: unknown, cmd: Command) => {
      // `runs` has --project and --json of its own and reads them wherever they stand: merged here
      const o = cmd.optsWithGlobals<{ project?: string; olderThan?: string; dryRun?: boolean; json?: boolean; batch?: string }>();
      io.exit(await runRunsPurge({ project: o.project, olderThan: o.olderThan, dryRun: o.dryRun, json: o.json, batch: o.batch }, io));
    });
}
