// `aqven run FLOW` (DESIGN: CLI). Exit statuses: 0 succeeded, 1 failed, 2 bad usage/config, 3
// cannot record (the database cannot be written: nothing was called, or the run was stopped),
// 130/143 stopped by SIGINT/SIGTERM (the run is recorded interrupted). With `--queue` (PostgreSQL
// mode): 0 queued, 2 not PostgreSQL mode or bad input, 3 database unreachable or the run not queued.
// A run records who started it: `cli:<login>` (the OS login; USER, else `unknown`). Everything it
// says goes through its CliIo; `aqven runs`, `search` and `show` are in runs.ts.
import type { Command } from 'commander';
import { closeDatabase, databaseTarget } from '@/db/client';
import type { Db } from '@/db/types';
import { DatabaseUnreachableError, reachPg } from '@/db/status-queries';
import { StorageError } from '@/db/storage-error';
import { RunInputError, RunNotRecordedError, runFlow, UnknownFlowError } from '@/lib/flow/run-flow';
import { runModeKind } from '@/lib/flow/run-mode';
import { openSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { simulateRequested } from '@/lib/flow/simulate';
import type { RunRecord } from '@/lib/flow/run-record';
import { startAlerts } from '@/lib/observe/alerts/start-alerts';
import { formatDiagnostic } from '@/lib/project';
import { cliRunStart } from './cli-caller';
import { commandTracing } from './command-tracing';
import { recordAfterLookup } from './cut-off-lookup';
import { EXIT_CANNOT_RECORD, EXIT_USAGE, exitFor, UsageError } from './exit';
import { formatRun, LiveProgress } from './format-run';
import { processIo, type CliIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';
import { parseRunInput } from './run-input';
import { registerRuns } from './runs';
import { underStopSignals } from './stop-signals';

export { EXIT_CANNOT_RECORD };
export { SIGNAL_EXIT_MS } from './stop-signals';

export interface RunCommandOptions {
  project?: string;
  input?: string;
  inputFile?: string;
  json?: boolean;
  simulate?: boolean;
  queue?: boolean;
}

const printed = (record: RunRecord, json: boolean | undefined) => (json ? `${JSON.stringify(record, null, 2)}\n` : `${formatRun(record)}\n`);

/** The command's author, once the caller's limits allow it a run start (cli:<login>: always); a refusal is bad usage. */
async function startAllowed(db: Db): Promise<string> {
  const { author, refused } = await cliRunStart(db);
  if (refused) throw new UsageError(`${refused.code} ${refused.message}`);
  return author;
}

/** `aqven run --queue` (PostgreSQL mode): the run becomes a job for `aqven worker`; its id is printed at once. */
async function queueRun(dir: string, flow: string, input: unknown, opts: RunCommandOptions, io: CliIo, opened: (s: Session) => void): Promise<number> {
  if (runModeKind() !== 'queue') throw new UsageError('--queue needs AQVEN_DATABASE_URL=postgres://…: runs are queued only in PostgreSQL mode');
  await reachPg(databaseTarget(''));
  const session = await openSession(dir, {});
  opened(session);
  const started = await session.mode.start(session, { flow, input, startedBy: await startAllowed(session.db) });
  if (!started.ok) {
    io.err(`aqven run: ${started.error}; nothing was queued\n`);
    return EXIT_CANNOT_RECORD;
  }
  io.out(opts.json ? `${JSON.stringify({ id: started.id, status: 'queued' })}\n` : `run ${started.id} queued\n`);
  return 0;
}

/** The flow run in this process, under stop signals; the run printed; its status as the exit status. */
async function runHere(dir: string, flow: string, input: unknown, opts: RunCommandOptions, io: CliIo, opened: (s: Session) => void): Promise<number> {
  // the session loads the folder (or the newest snapshot) now, and the run starts right after:
  // a command holds no session long enough to go stale, so it records the hash it loaded
  const s = await openSession(dir, { simulate: simulateRequested(opts.simulate) });
  opened(s);
  // a missing key fails every call only after the transport's tries: say so before the run
  for (const d of s.warnings) io.err(`${formatDiagnostic(d)}\n`);
  const live = !opts.json && process.stderr.isTTY ? new LiveProgress(process.stderr) : null;
  const ac = new AbortController();
  const { project, providers, env, db, snapshotId, projectHash } = s;
  const startedBy = await startAllowed(db);
  // aqven.yaml's alerts: a failed node is evaluated once the run is recorded; the command waits for the delivery after printing the run
  const alerts = startAlerts({ onWarning: (line) => io.err(`aqven run: ${line}\n`) });
  // the run's spans, when the environment asks for traces: sent before the command ends
  const tracing = await commandTracing((line) => io.err(`${line}\n`));
  try {
    const { value: record, signalExit } = await underStopSignals(ac, io, () =>
      runFlow({ project, flow, input, providers, env, db, snapshotId, projectHash, startedBy, onProgress: live?.onProgress, signal: ac.signal }),
    );
    const shown = signalExit === null ? await recordAfterLookup('run', s, record, (line) => io.err(`${line}\n`)) : record;
    io.out(printed(shown, opts.json));
    return signalExit ?? (record.status === 'succeeded' ? 0 : 1);
  } finally {
    await alerts.stop();
    await tracing?.shutdown();
  }
}

/** How `aqven run` ends on a failure it knows; an unknown one is rethrown (exit 70 in main.ts). */
function runFailure(err: unknown, opts: RunCommandOptions, io: CliIo): number {
  const say = (text: string) => io.err(`aqven run: ${text}\n`);
  if (err instanceof RunNotRecordedError) {
    // what happened is not lost: the run as this process saw it, and one line on why it is not stored
    io.out(printed(err.record, opts.json));
    say(err.message);
    return EXIT_CANNOT_RECORD;
  }
  if (err instanceof StorageError) return (say(`${err.message}; no provider was called`), EXIT_CANNOT_RECORD);
  if (err instanceof DatabaseUnreachableError) return (say(`${err.message}; nothing was queued`), EXIT_CANNOT_RECORD);
  if (err instanceof ProjectInvalidError) for (const d of err.diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
  return exitFor(err, say, [[[UsageError, RunInputError, UnknownFlowError, ProjectInvalidError], EXIT_USAGE]]);
}

/** `aqven run FLOW`: resolves with the exit status; everything it says goes to `io`. */
export async function runRunCommand(flow: string, opts: RunCommandOptions, io: CliIo = processIo): Promise<number> {
  let session: Session | undefined;
  const opened = (s: Session) => void (session = s);
  try {
    const dir = resolveProjectDir(opts.project);
    const input = parseRunInput(flow, opts);
    return await (opts.queue ? queueRun : runHere)(dir, flow, input, opts, io, opened);
  } catch (err) {
    return runFailure(err, opts, io);
  } finally {
    await session?.close();
    // the WAL is checkpointed and truncated: a finished command leaves only the database file
    if (session) await closeDatabase(session.db);
  }
}

export function registerRun(program: Command, io: CliIo = processIo): void {
  program
    .command('run')
    .description('run a flow, store every attempt and print the run')
    .argument('<flow>', 'flow name (flows/<flow>.yaml)')
    .option('--project <dir>', PROJECT_HELP)
    .option('--input <json>', 'run input as JSON')
    .option('--input-file <file>', 'run input from a JSON file')
    .option('--json', 'print the run record as JSON')
    .option('--simulate', 'route every provider to the in-process simulator (also AQVEN_SIMULATE=1)')
    .option('--queue', 'PostgreSQL mode: queue the run for `aqven worker` and print its id at once')
    .action(async (flow: string, opts: RunCommandOptions) => io.exit(await runRunCommand(flow, opts, io)));
  registerRuns(program, io);
}
