// `aqven project push DIR`, `aqven project pull DIR [--force]`, `aqven project log [--limit N]
// [--json]` (DESIGN: CLI; Storage, "The project in the database"): the project's files as
// snapshots in the PostgreSQL database of AQVEN_DATABASE_URL, which every worker and the
// dashboard run. Exit statuses: 0 done; 1 push refused (the project fails check, or its files
// cannot be stored), pull refused (files differ without --force, a path or link refused, nothing
// pushed yet); 2 bad usage (AQVEN_DATABASE_URL unset or not postgres://); 3 the database cannot
// be reached or opened.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { databaseUrl, sharedDatabaseUrl } from '@/db/client';
import { openForCommand, type CommandDatabase } from '@/db/command-database';
import { cliAuthor, latestSnapshot, listSnapshots, pushSnapshot } from '@/db/snapshot-queries';
import type { Db } from '@/db/types';
import { ProjectFilesError, readProjectFiles, writeProjectFiles } from '@/lib/project';
import { auditCli } from './audit-record';
import { runCheck } from './check';
import { type CliIo, processIo } from './io';
import { printable } from './printable';
import { EXIT_CANNOT_OPEN, EXIT_USAGE, exitFor } from './exit';
import { UsageError } from './usage-error';

type Env = Record<string, string | undefined>;

export const EXIT_REFUSED = 1;

export { EXIT_CANNOT_OPEN, EXIT_USAGE };

/** exit 1 with this one line */
class Refused extends Error {}

export interface ProjectCommandOptions {
  env?: Env;
  /** default `cli:<login>` */
  author?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** AQVEN_DATABASE_URL, which every project command needs: a shared (PostgreSQL) database. */
function projectDatabaseUrl(env: Env): string {
  const url = sharedDatabaseUrl(env);
  if (url) return url;
  throw new UsageError(
    databaseUrl(env) === null
      ? 'AQVEN_DATABASE_URL is not set: the project lives in a PostgreSQL database (postgres://user:password@host/database)'
      : 'AQVEN_DATABASE_URL must be a postgres:// URL: the project lives in a PostgreSQL database',
  );
}

/** Opens the database of AQVEN_DATABASE_URL (migrated), runs `f`, closes it; failures become one line and an exit status. */
async function withDatabase(command: string, env: Env, io: CliIo, f: (db: Db) => Promise<number>): Promise<number> {
  const say = (text: string) => io.err(`aqven project ${command}: ${text}\n`);
  let opened: CommandDatabase | undefined;
  try {
    opened = await openForCommand(projectDatabaseUrl(env));
    return await f(opened.db);
  } catch (err) {
    return exitFor(err, say, [
      [[UsageError], EXIT_USAGE],
      [[Refused, ProjectFilesError], EXIT_REFUSED],
    ]);
  } finally {
    await opened?.close();
  }
}

/** `aqven project push DIR`: `aqven check` first (its report printed), then the files as a snapshot. */
export async function runProjectPush(dir: string, opts: ProjectCommandOptions = {}, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  const root = resolve(dir);
  try {
    projectDatabaseUrl(env); // before the check: a missing URL is the first thing to say
  } catch (err) {
    io.err(`aqven project push: ${(err as Error).message}\n`);
    return EXIT_USAGE;
  }
  if ((await runCheck({ project: root, env }, io)) !== 0) {
    io.err(`aqven project push: ${root} fails aqven check; nothing was pushed\n`);
    return EXIT_REFUSED;
  }
  return withDatabase('push', env, io, async (db) => {
    const files = await readProjectFiles(root);
    const pushed = await pushSnapshot(db, { files, author: opts.author ?? cliAuthor(), note: 'push' });
    await auditCli('project push', db, io, {
      kind: 'project.pushed',
      actor: opts.author,
      target: `snapshot ${pushed.id}`,
      detail: { created: pushed.created, files: Object.keys(files).length },
    });
    io.out(`snapshot ${pushed.id} (${pushed.created ? 'new' : 'unchanged'}), ${plural(Object.keys(files).length, 'file')}\n`);
    return 0;
  });
}

/** `aqven project pull DIR [--force]`: the newest snapshot's files into DIR, byte for byte; never deletes. */
export async function runProjectPull(dir: string, opts: ProjectCommandOptions & { force?: boolean } = {}, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  const root = resolve(dir);
  return withDatabase('pull', env, io, async (db) => {
    const snapshot = await latestSnapshot(db);
    if (!snapshot) throw new Refused('the database holds no project yet: run `aqven project push DIR` first');
    const result = await writeProjectFiles(root, snapshot.files, { force: opts.force, origin: `snapshot ${snapshot.id}` });
    if (result.differing.length && !opts.force) {
      for (const f of result.differing) io.err(`  ${f} differs from snapshot ${snapshot.id}\n`);
      throw new Refused(`${plural(result.differing.length, 'file')} in ${root} differ from snapshot ${snapshot.id}; nothing was written (--force overwrites them)`);
    }
    const total = result.written.length + result.unchanged.length;
    io.out(`snapshot ${snapshot.id}: ${plural(total, 'file')} into ${root} (${result.written.length} written, ${result.unchanged.length} unchanged)\n`);
    return 0;
  });
}

/** `aqven project log [--limit N] [--json]`: the snapshots, newest first. */
export async function runProjectLog(opts: ProjectCommandOptions & { limit?: number; json?: boolean } = {}, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  return withDatabase('log', env, io, async (db) => {
    const snapshots = await listSnapshots(db, opts.limit ?? 20);
    if (opts.json) {
      io.out(
        `${JSON.stringify(
          snapshots.map((s) => ({ ...s, createdAt: new Date(s.createdAt).toISOString() })),
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    if (snapshots.length === 0) io.out('no snapshots yet: run `aqven project push DIR`\n');
    // the author and note are stored text (a dashboard user's note): escaped as all stored text is
    for (const s of snapshots) io.out(printable(`${String(s.id).padStart(5)}  ${new Date(s.createdAt).toISOString()}  ${s.author ?? '-'}  ${s.note ?? ''}`.trimEnd()) + '\n');
    return 0;
  });
}

export function registerProject(program: Command, io: CliIo = processIo): Command {
  const project = program.command('project').description('the project in the PostgreSQL database of AQVEN_DATABASE_URL: push, pull, log');

  project
    .command('push')
    .description('check a project folder, then store its files as the newest snapshot (unchanged files store nothing)')
    .argument('<dir>', 'the project folder')
    .action(async (dir: string) => io.exit(await runProjectPush(dir, {}, io)));

  project
    .command('pull')
    .description("write the newest snapshot's files into a folder, byte for byte (never deletes)")
    .argument('<dir>', 'the folder (created if missing)')
    .option('--force', 'overwrite files that differ from the snapshot')
    .action(async (dir: string, opts: { force?: boolean }) => io.exit(await runProjectPull(dir, opts, io)));

  project
    .command('log')
    .description('list the snapshots, newest first: id, when, who, what')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'print JSON')
    .action(async (opts: { limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1) {
        io.err(`aqven project log: --limit must be a positive whole number, got "${opts.limit}"\n`);
        return io.exit(EXIT_USAGE);
      }
      io.exit(await runProjectLog({ limit, json: opts.json }, io));
    });
  return project;
}
