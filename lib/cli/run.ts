// `aqven run`, `aqven runs`, `aqven show` (DESIGN: CLI). Exit statuses: 0 succeeded, 1 failed,
// 2 bad usage/config, 3 cannot record (the database cannot be written: nothing was called, or the
// run was stopped), 130/143 stopped by SIGINT/SIGTERM (the run is recorded interrupted). With
// `--queue` (PostgreSQL mode): 0 queued, 2 not PostgreSQL mode or bad input, 3 database unreachable.
// A run records who started it: `cli:<login>` (the OS login; USER, else `unknown`).
import { closeSync, openSync, readSync } from 'node:fs';
import type { Command } from 'commander';
import { closeDatabase, databaseTarget, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { listRuns } from '@/db/queries';
import { searchHistory } from '@/db/search-queries';
import { DatabaseUnreachableError, reachPg } from '@/db/status-queries';
import { DatabaseUrlError, StorageError } from '@/db/storage-error';
import { interruptAllNow } from '@/lib/flow/active-runs';
import { RunInputError, RunInterruptedError, RunNotRecordedError, runFlow, UnknownFlowError } from '@/lib/flow/run-flow';
import { runModeKind } from '@/lib/flow/run-mode';
import { openSession, ProjectInvalidError } from '@/lib/flow/session';
import { simulateRequested } from '@/lib/flow/simulate';
import { getRunRecord } from '@/lib/flow/stored-run';
import { formatDiagnostic, loadProject } from '@/lib/project';
import { parseRunFilters, RUN_RANGES } from '@/lib/dashboard/run-filters';
import { RUN_STATUSES } from '@/lib/dashboard/run-status';
import { ATTEMPT_CAUSES, RUN_KINDS } from '@/lib/shared/run-list-values';
import { formatRun, formatRunList, LiveProgress } from './format-run';
import { processIo, type CliIo } from './io';
import { cliRunId, formatSearchPage } from './find-runs';
import { recordAfterLookup } from './cut-off-lookup';
import { UsageError } from './exit';
import { cliRunStart } from './cli-caller';
import { resolveProjectDir } from './project-dir';
import { inputFileTooLarge, maxInputBytes } from '@/lib/contracts/input-size';
import { startRunRefusal, startRunTextSchema } from '@/lib/contracts/start-run';

/** Exit status 3: the run database cannot be written (DESIGN: CLI). */
export const EXIT_CANNOT_RECORD = 3;
const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };
/** after a stop signal, the longest wait for the run to record itself before the process exits anyway */
export const SIGNAL_EXIT_MS = 4_000;

/**
 * While `f` runs, SIGINT and SIGTERM abort `ac` (the run records itself interrupted and `f` ends);
 * if that takes longer than SIGNAL_EXIT_MS, or a second signal comes, what is left is recorded
 * synchronously and the process exits. Returns the exit status a signal asks for, or null.
 */
async function underStopSignals<T>(ac: AbortController, f: () => Promise<T>): Promise<{ value: T; signalExit: number | null }> {
  let signalExit: number | null = null;
  const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
    const why = `stopped by ${sig}`;
    if (signalExit !== null) {
      interruptAllNow(why); // a second signal: no more waiting
      process.exit(signalExit);
    }
    signalExit = SIGNAL_EXIT[sig];
    const code = signalExit;
    ac.abort(new RunInterruptedError(why));
    setTimeout(() => {
      interruptAllNow(why);
      console.error(`aqven run: the run did not stop within ${SIGNAL_EXIT_MS / 1000} s of ${sig}; recorded as interrupted`);
      process.exit(code);
    }, SIGNAL_EXIT_MS).unref();
  };
  // any other way out (an uncaught error, process.exit): the run is recorded interrupted, not left running
  const onExit = () => interruptAllNow('stopped: the process exited');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  try {
    const value = await f();
    return { value, signalExit };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  }
}

/** The flow and the input as the start-a-run contract parses them: the input from --input or the file as JSON text, `{}` without either. */
function parseInput(flow: string, opts: { input?: string; inputFile?: string }): unknown {
  if (opts.input && opts.inputFile) throw new UsageError('give --input or --input-file, not both');
  const [text, where] = opts.inputFile ? [readFileOrThrow(opts.inputFile), opts.inputFile] : [opts.input ?? '{}', '--input'];
  const parsed = startRunTextSchema.safeParse({ flow, input: text });
  if (!parsed.success) throw new UsageError(startRunRefusal(parsed.error, { flow: 'the flow', input: where }).message);
  return parsed.data.input;
}

/**
 * The file's text, read to at most one byte past the run input cap: a bigger file (or /dev/zero, a
 * pipe that never ends) is refused as the cap refuses an input, without holding more of it.
 */
function readFileOrThrow(path: string, limit: number = maxInputBytes()): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(limit + 1);
    let size = 0;
    for (let n; size < buf.length && (n = readSync(fd, buf, size, buf.length - size, null)) > 0;) size += n;
    if (size > limit) {
      throw new UsageError(inputFileTooLarge(path, limit));
    }
    return buf.toString('utf8', 0, size);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read --input-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** The command's author, once the caller's limits allow it a run start (cli:<login>: always); a refusal is bad usage. */
async function startAllowed(db: Db): Promise<string> {
  const { author, refused } = await cliRunStart(db);
  if (refused) throw new UsageError(`${refused.code} ${refused.message}`);
  return author;
}

async function runCommand(flow: string, opts: { project?: string; input?: string; inputFile?: string; json?: boolean; simulate?: boolean; queue?: boolean }, io: CliIo) {
  let session;
  try {
    const dir = resolveProjectDir(opts.project);
    const input = parseInput(flow, opts);
    if (opts.queue) {
      // PostgreSQL mode: the run becomes a job for `aqven worker`; its id is printed at once (DESIGN: CLI)
      if (runModeKind() !== 'queue') throw new UsageError('--queue needs AQVEN_DATABASE_URL=postgres://…: runs are queued only in PostgreSQL mode');
      await reachPg(databaseTarget(''));
      session = await openSession(dir, {});
      const author = await startAllowed(session.db);
      const started = await session.mode.start(session, { flow, input, startedBy: author });
      if (!started.ok) {
        io.err(`aqven run: ${started.error}; nothing was queued`);
        io.exit(EXIT_CANNOT_RECORD);
        return;
      }
      io.out(opts.json ? `${JSON.stringify({ id: started.id, status: 'queued' })}\n` : `run ${started.id} queued\n`);
      io.exit(0);
      return;
    }
    // the session loads the folder (or the newest snapshot) now, and the run starts right after:
    // a command holds no session long enough to go stale, so it records the hash it loaded
    session = await openSession(dir, { simulate: simulateRequested(opts.simulate) });
    // a missing key fails every call only after the transport's tries: say so before the run
    for (const d of session.warnings) io.err(formatDiagnostic(d));
    const author = await startAllowed(session.db);
    const live = !opts.json && process.stderr.isTTY ? new LiveProgress(process.stderr) : null;
    const ac = new AbortController();
    const s = session;
    const { value: record, signalExit } = await underStopSignals(ac, () =>
      runFlow({
        project: s.project,
        flow,
        input,
        providers: s.providers,
        env: s.env,
        db: s.db,
        snapshotId: s.snapshotId,
        projectHash: s.projectHash,
        startedBy: author,
        onProgress: live?.onProgress,
        signal: ac.signal,
      }),
    );
    const shown = signalExit === null ? await recordAfterLookup('run', s, record) : record;
    io.out(opts.json ? `${JSON.stringify(shown, null, 2)}\n` : `${formatRun(shown)}\n`);
    io.exit(signalExit ?? (record.status === 'succeeded' ? 0 : 1));
  } catch (err) {
    if (err instanceof RunNotRecordedError) {
      // what happened is not lost: the run as this process saw it, and one line on why it is not stored
      io.out(opts.json ? `${JSON.stringify(err.record, null, 2)}\n` : `${formatRun(err.record)}\n`);
      io.err(`aqven run: ${err.message}`);
      io.exit(EXIT_CANNOT_RECORD);
      return;
    }
    if (err instanceof StorageError) {
      io.err(`aqven run: ${err.message}; no provider was called`);
      io.exit(EXIT_CANNOT_RECORD);
      return;
    }
    if (err instanceof DatabaseUnreachableError) {
      io.err(`aqven run: ${err.message}; nothing was queued`);
      io.exit(EXIT_CANNOT_RECORD);
      return;
    }
    if (err instanceof ProjectInvalidError) {
      for (const d of err.diagnostics) if (d.severity === 'error') io.err(formatDiagnostic(d));
      io.err(`aqven run: ${err.message}`);
    } else if (err instanceof UsageError || err instanceof DatabaseUrlError || err instanceof RunInputError || err instanceof UnknownFlowError) {
      io.err(`aqven run: ${err.message}`);
    } else throw err;
    io.exit(2);
  } finally {
    await session?.close();
    // the WAL is checkpointed and truncated: a finished command leaves only the database file
    if (session) await closeDatabase(session.db);
  }
}

/** Reads the project's run history with `read`, then closes the database (a PostgreSQL pool would keep the process alive). */
async function withProjectDb<T>(dirOpt: string | undefined, io: CliIo, read: (db: Db) => Promise<T>): Promise<T> {
  const { project, diagnostics } = await loadProject(resolveProjectDir(dirOpt));
  if (!project) {
    for (const d of diagnostics) if (d.severity === 'error') io.err(formatDiagnostic(d));
    throw new UsageError('the project fails aqven check');
  }
  const db = await openDatabase(databaseTarget(project.databasePath));
  try {
    return await read(db);
  } finally {
    await closeDatabase(db);
  }
}

/** `aqven runs`' options: the run list's query parameters (lib/dashboard/run-filters.ts), as commander reads them */
type RunsOptions = Partial<Record<'status' | 'flow' | 'agent' | 'model' | 'cause' | 'kind' | 'range' | 'from' | 'to', string>> & {
  project?: string;
  limit: string;
  retried?: boolean;
  fellBack?: boolean;
  json?: boolean;
};

function cannotRecord(command: string, err: StorageError, io: CliIo): void {
  io.err(`aqven ${command}: ${err.message}`);
  io.exit(EXIT_CANNOT_RECORD);
}

export function registerRun(program: Command, io: CliIo = processIo): void {
  program
    .command('run')
    .description('run a flow, store every attempt and print the run')
    .argument('<flow>', 'flow name (flows/<flow>.yaml)')
    .option('--project <dir>', 'project folder (default $AQVEN_PROJECT, then ./showcase)')
    .option('--input <json>', 'run input as JSON')
    .option('--input-file <file>', 'run input from a JSON file')
    .option('--json', 'print the run record as JSON')
    .option('--simulate', 'route every provider to the in-process simulator (also AQVEN_SIMULATE=1)')
    .option('--queue', 'PostgreSQL mode: queue the run for `aqven worker` and print its id at once')
    .action((flow: string, opts: Parameters<typeof runCommand>[1]) => runCommand(flow, opts, io));

  program
    .command('runs')
    .description("list recent runs, newest first; the filters are those of the dashboard's run list")
    .option('--project <dir>', 'project folder')
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
    .action(async (opts: RunsOptions) => {
      const { project, json, retried, fellBack, ...params } = opts;
      const parsed = parseRunFilters({ ...params, retried: retried ? '1' : undefined, fell_back: fellBack ? '1' : undefined });
      if (!parsed.ok) {
        io.err(`aqven runs: --${parsed.param.replace('_', '-')} ${parsed.reason}`);
        io.exit(2);
        return;
      }
      const filtered = Object.values(parsed.filters).some((v) => v !== undefined);
      try {
        const { items } = await withProjectDb(project, io, (db) => listRuns(db, { filters: parsed.filters, limit: parsed.limit }));
        io.out(json ? `${JSON.stringify(items, null, 2)}\n` : `${items.length || !filtered ? formatRunList(items) : 'no runs match'}\n`);
      } catch (err) {
        if (err instanceof StorageError) return cannotRecord('runs', err, io);
        if (!(err instanceof UsageError || err instanceof DatabaseUrlError)) throw err;
        io.err(`aqven runs: ${err.message}`);
        io.exit(2);
      }
    });

  program
    .command('search')
    .description('search run inputs, node outputs and failure text (and run ids by prefix), newest first')
    .argument('<words...>', 'words that must all be there; word* for a prefix')
    .option('--project <dir>', 'project folder')
    .option('--limit <n>', 'hits per page (1-100)', '20')
    .option('--before <n>', 'older text: the "next" of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (words: string[], opts: { project?: string; limit: string; before?: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      const before = opts.before === undefined ? null : Number(opts.before);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100 || (before !== null && !Number.isSafeInteger(before))) {
        io.err('aqven search: --limit must be a whole number from 1 to 100, --before a whole number');
        io.exit(2);
        return;
      }
      try {
        const page = await withProjectDb(opts.project, io, (db) => searchHistory(db, { q: words.join(' '), limit, before }));
        io.out(opts.json ? `${JSON.stringify(page, null, 2)}\n` : `${formatSearchPage(page)}\n`);
      } catch (err) {
        if (err instanceof StorageError) return cannotRecord('search', err, io);
        if (!(err instanceof UsageError || err instanceof DatabaseUrlError)) throw err;
        io.err(`aqven search: ${err.message}`);
        io.exit(2);
      }
    });

  program
    .command('show')
    .description('show one run')
    .argument('<runId>', 'run id, its short id (the 8 characters shown for a run), or a prefix of 4 or more')
    .option('--project <dir>', 'project folder')
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, opts: { project?: string; json?: boolean }) => {
      try {
        const found = await withProjectDb(opts.project, io, async (db) => {
          const named = await cliRunId(db, 'show', runId);
          return named.ok ? { named, record: await getRunRecord(db, named.id) } : { named, record: null };
        });
        if (!found.named.ok || !found.record) {
          io.err(found.named.ok ? `aqven show: no run with id ${runId}` : found.named.message);
          io.exit(found.named.ok ? 1 : found.named.exitCode);
          return;
        }
        const record = found.record;
        io.out(opts.json ? `${JSON.stringify(record, null, 2)}\n` : `${formatRun(record)}\n`);
      } catch (err) {
        if (err instanceof StorageError) return cannotRecord('show', err, io);
        if (!(err instanceof UsageError || err instanceof DatabaseUrlError)) throw err;
        io.err(`aqven show: ${err.message}`);
        io.exit(2);
      }
    });
}
