// `aqven db migrate`, `aqven db status [--json]`, `aqven db copy --from FILE` (DESIGN: CLI): the
// operations commands of the run database — AQVEN_DATABASE_URL when set, else the project's SQLite
// file. Exit statuses: 0 done, 1 a migration or a copy batch failed (db migrate, db copy), 2 bad
// usage or config (a project failing check, a copy into something other than PostgreSQL, a source
// that is not an AQVEN database), 3 the database cannot be opened or reached.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { closeDb, databaseUrl, openDatabase, sharedDatabaseUrl } from '@/db/client';
import { describeTarget, migrateDatabase, reachDatabase, readFailure, statusWords } from '@/db/command-database';
import { CopyBatchError, copySqliteHistory, CopySourceError, type CopyProgress, type TableCopied } from '@/db/copy';
import { pgReason } from '@/db/pg';
import { databaseStatus, describeVersion, inspectDatabase, queueSchemaVersion, schemaVersion, type DatabaseStatus, type SchemaVersion, type SeenWorker } from '@/db/status-queries';
import { StorageError } from '@/db/storage-error';
import { type CliIo, processIo } from './io';
import { commandDatabaseTarget, PROJECT_OPTION } from './project-dir';
import { EXIT_CANNOT_OPEN, EXIT_USAGE, UsageError, exitFor } from './exit';

type Env = Record<string, string | undefined>;

/** Exit 1: a migration or a batch of the copy failed. */
export const EXIT_FAILED = 1;

export { EXIT_CANNOT_OPEN, EXIT_USAGE };

export interface DbOptions {
  project?: string;
  env?: Env;
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** Maps what a command throws to its one line and exit status; anything else is a bug (exit 70 in main.ts). */
function failed(command: string, err: unknown, io: CliIo): number {
  return exitFor(err, (text) => io.err(`aqven db ${command}: ${text}\n`), [
    [[UsageError, CopySourceError], EXIT_USAGE],
    [[CopyBatchError], EXIT_FAILED],
  ]);
}

/** "7 migrations, latest 0006_scale_out" / "no migrations applied" */
function versionLine(v: SchemaVersion): string {
  return v.applied === 0 ? 'no migrations applied' : `${plural(v.applied, 'migration')}, latest ${v.latest ?? '(unknown to this aqven)'}`;
}

/** Runs a read of `target`; a failure becomes the one line of exit 3 (a damaged file, a schema we may not read). */
async function reading<T>(target: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw readFailure(target, err);
  }
}

async function versionOf(target: string, env: Env): Promise<{ schema: SchemaVersion | null; queue: number | null }> {
  return reading(target, async () => {
    const opened = inspectDatabase(target);
    if (!opened) return { schema: null, queue: null };
    try {
      return { schema: await schemaVersion(opened.db), queue: await queueSchemaVersion(opened.db, env) };
    } finally {
      await opened.close();
    }
  });
}

// ---- aqven db migrate -----------------------------------------------------------------------

/** Applies the migrations of the configured database (and graphile-worker's schema in PostgreSQL mode). */
export async function runDbMigrate(opts: DbOptions, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  try {
    const target = await commandDatabaseTarget(opts, io);
    const { where, kind } = describeTarget(target);
    await reachDatabase(target);
    const before = await versionOf(target, env);
    try {
      await migrateDatabase(target);
    } catch (err) {
      if (err instanceof StorageError) throw err;
      io.err(`aqven db migrate: migrating the ${kind} database ${where} failed: ${pgReason((err as { cause?: unknown }).cause ?? err)}\n`);
      return EXIT_FAILED;
    }
    const after = await versionOf(target, env);
    const schema = after.schema!;
    io.out(`database  ${where} (${kind})\n`);
    const was = before.schema ? versionLine(before.schema) : 'no database yet';
    const applied = schema.applied - (before.schema?.applied ?? 0);
    const state = describeVersion(schema);
    io.out(applied > 0 ? `schema    ${was} → ${versionLine(schema)}: ${state}\n` : `schema    ${versionLine(schema)}: ${state === 'up to date' ? 'already up to date' : state}\n`);
    // a database with a job queue (PostgreSQL) has its schema installed by the migration
    const q = after.queue;
    if (q !== null) {
      io.out(
        before.queue === null
          ? `queue     graphile-worker schema installed (migration ${q})\n`
          : before.queue === q
            ? `queue     graphile-worker schema up to date (migration ${q})\n`
            : `queue     graphile-worker schema updated (migration ${before.queue} → ${q})\n`,
      );
    }
    return 0;
  } catch (err) {
    return failed('migrate', err, io);
  }
}

// ---- aqven db status ------------------------------------------------------------------------

function ago(ms: number): string {
  if (ms < 1_000) return 'just now';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s ago`;
  return `${Math.round(ms / 60_000)} min ago`;
}

function workerLine(w: SeenWorker): string {
  return `          ${w.id}  ${w.host}  pid ${w.pid}  ${w.running}/${w.concurrency} running  seen ${ago(w.seenAgoMs)}`;
}

export function formatStatus(s: DatabaseStatus): string {
  const words = statusWords(s);
  const lines = [`database  ${s.target} (${words.kind})`];
  if (!s.exists) {
    lines.push(`schema    no database yet: the first run or \`aqven db migrate\` creates it (${plural(s.schema.known, 'migration')} to apply)`);
    return lines.join('\n');
  }
  const v = s.schema;
  const latest = v.latest ? `, latest ${v.latest}` : v.applied > 0 ? ', latest unknown to this aqven' : '';
  const newest = v.behind > 0 && v.applied > 0 ? ` (newest ${v.newest})` : '';
  lines.push(`schema    ${v.applied} of ${v.known} migrations applied${latest}${newest}: ${v.state}${v.behind > 0 && v.ahead === 0 ? '; run `aqven db migrate`' : ''}`);
  if (s.runs) {
    const parts = Object.entries(s.runs.byStatus).map(([status, n]) => `${n.toLocaleString('en-US')} ${status}`);
    lines.push(`runs      ${s.runs.total.toLocaleString('en-US')}${parts.length ? `: ${parts.join(', ')}` : ''}`);
  } else lines.push('runs      no runs table yet');
  if (s.queue) {
    const { waiting, running, left, failed } = s.queue;
    // jobs a stopped worker still locks are said apart: their runs were taken over (or will be within seconds)
    const leftText = left ? `, ${left} left locked by a worker that stopped (their runs taken over; graphile-worker unlocks them after 4 h)` : '';
    lines.push(`queue     ${waiting} waiting, ${running} running, ${failed} failed${leftText}`);
  } else lines.push(`queue     no queue (${words.noQueue})`);
  if (s.workers.length === 0) lines.push('workers   none seen in the last minute');
  else {
    lines.push(`workers   ${s.workers.length} seen in the last minute:`);
    for (const w of s.workers) lines.push(workerLine(w));
  }
  return lines.join('\n');
}

export async function runDbStatus(opts: DbOptions & { json?: boolean; now?: number }, io: CliIo = processIo): Promise<number> {
  try {
    const target = await commandDatabaseTarget(opts, io);
    await reachDatabase(target);
    // a SQLite file that is not a database, a PostgreSQL schema we may not read…: exit 3
    const status = await reading(target, () => databaseStatus(target, opts.now ?? Date.now(), opts.env ?? process.env));
    io.out(`${opts.json ? JSON.stringify(status, null, 2) : formatStatus(status)}\n`);
    return 0;
  } catch (err) {
    return failed('status', err, io);
  }
}

// ---- aqven db copy --------------------------------------------------------------------------

function tableLine(t: TableCopied): string {
  return `${t.table.padEnd(18)} ${plural(t.copied, 'row')} copied, ${t.existing.toLocaleString('en-US')} already there`;
}

export async function runDbCopy(opts: DbOptions & { from: string; batchRows?: number; progress?: (text: string) => void }, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  let opened: string | null = null;
  try {
    const url = sharedDatabaseUrl(env);
    if (!url) {
      throw new UsageError(
        databaseUrl(env) !== null
          ? 'AQVEN_DATABASE_URL must be a postgres:// URL to copy into; it names something else'
          : 'set AQVEN_DATABASE_URL to the PostgreSQL database to copy into (postgres://user:password@host/database)',
      );
    }
    await reachDatabase(url);
    const db = await openDatabase(url); // migrated: the copy needs the tables
    opened = url;
    const progress = opts.progress;
    const clear = () => progress?.('\r\x1b[K');
    const tables = await copySqliteHistory(opts.from, db, {
      batchRows: opts.batchRows,
      onNote: (text) => io.err(`aqven db copy: ${text}\n`),
      onProgress: progress && ((p: CopyProgress) => progress(`\r\x1b[Kcopying ${p.table} ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')}`)),
      onTable: (t) => {
        clear();
        io.out(`${tableLine(t)}\n`);
      },
    });
    clear();
    const copied = tables.reduce((n, t) => n + t.copied, 0);
    const existing = tables.reduce((n, t) => n + t.existing, 0);
    io.out(`copied ${plural(copied, 'row')} from ${resolve(opts.from)} into ${db.name}; ${existing.toLocaleString('en-US')} already there\n`);
    return 0;
  } catch (err) {
    opts.progress?.('\r\x1b[K');
    return failed('copy', err, io);
  } finally {
    if (opened) await closeDb(opened);
  }
}

// ---- registration ---------------------------------------------------------------------------

export function registerDb(program: Command, io: CliIo = processIo): Command {
  const db = program.command('db').description('the run database: migrate it, show its state, copy a SQLite history into PostgreSQL');

  db.command('migrate')
    .description('apply the migrations of the database (and the job queue schema in PostgreSQL mode); print the version before and after')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (opts: { project?: string }) => io.exit(await runDbMigrate(opts, io)));

  db.command('status')
    .description('dialect, schema version, runs by status, queue depth and the workers seen in the last minute')
    .option('--project <dir>', PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(async (opts: { project?: string; json?: boolean }) => io.exit(await runDbStatus(opts, io)));

  db.command('copy')
    .description('copy a SQLite history into the PostgreSQL database of AQVEN_DATABASE_URL (again: copies only what is new)')
    .requiredOption('--from <file>', 'the SQLite database file (opened read-only)')
    .action(async (opts: { from: string }) => {
      const progress = process.stderr.isTTY ? (text: string) => void process.stderr.write(text) : undefined;
      io.exit(await runDbCopy({ ...opts, progress }, io));
    });
  return db;
}
