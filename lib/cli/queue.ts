// `aqven worker [--concurrency N] [--simulate] [--project DIR] [--drain-timeout S] [--metrics-port P
// [--metrics-host H]]` and
// `aqven cancel RUN_ID` (DESIGN: CLI; Storage, "Workers and the queue"). PostgreSQL mode only
// (AQVEN_DATABASE_URL=postgres://…). Once started, the worker says what happens as log lines on
// stdout (lib/observe: JSON, or AQVEN_LOG_FORMAT=pretty) — its own news, the runs it claims, takes
// over and hands back, and every run's lines — and on a terminal a progress line on stderr, redrawn
// in place. A refusal before it starts (bad usage, no database, a project that fails check) is one
// line on stderr.
// With --metrics-port it also serves its own GET /metrics (lib/observe/metrics-server.ts).
// Exit statuses — worker: 0 stopped by SIGINT/SIGTERM after draining, 1 the queue failed, 2 bad
// usage or config, 3 the database cannot be reached, 130/143 a second signal cut the drain short;
// cancel: 0 cancelled, 1 not cancelled (not queued, no such run, or SQLite mode), 2 bad usage, 3.
import type { Command } from 'commander';
import { closeDatabase, databaseTarget } from '@/db/client';
import { isConnectionLoss, pgReason, queryErrorText } from '@/db/pg';
import { reachPg } from '@/db/status-queries';
import { fmtDuration } from '@/lib/engine/duration-text';
import { interruptAllNow } from '@/lib/flow/active-runs';
import { NoSnapshotError, openSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { sharedSimulatorUrl, simulateRequested, SimUrlError } from '@/lib/flow/simulate';
import { formatDiagnostic } from '@/lib/project';
import { NOTHING_QUEUED, openQueueMode, runModeKind } from '@/lib/flow/run-mode';
import { cancelRunSchema } from '@/lib/contracts/cancel-run';
import { firstIssue } from '@/lib/contracts/refusal';
import { startAlerts } from '@/lib/observe/alerts/start-alerts';
import { QueueWorker, type RunEnd, type RunTaken, type WorkerStats } from '@/lib/queue/worker';
import { errorField, LogSettingError, logSettings } from '@/lib/observe/logger';
import { startLogs, type ProcessLogs } from '@/lib/observe/logs';
import { PROCESS_OWNER } from '@/db/run-lease';
import { DEFAULT_METRICS_HOST, startMetricsServer, type MetricsServer } from '@/lib/observe/metrics-server';
import { processMetrics } from '@/lib/observe/process-metrics';
import { commandTracing } from './command-tracing';
import { type CliIo, processIo } from './io';
import { cliRunId } from './find-runs';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';
import { printable } from './printable';
import { EXIT_CANNOT_OPEN, EXIT_USAGE, exitFor, SIGNAL_EXIT } from './exit';
import { UsageError } from './usage-error';

export const EXIT_NOT_CANCELLED = 1;
export const EXIT_QUEUE_FAILED = 1;
export const DEFAULT_CONCURRENCY = 4;
export const DEFAULT_DRAIN_TIMEOUT_S = 30;
/** after the drain, the longest wait for the handed-back runs to record themselves before the process exits anyway */
const HAND_BACK_EXIT_MS = 10_000;

type Env = Record<string, string | undefined>;
export { EXIT_CANNOT_OPEN, EXIT_USAGE };

function positiveInt(name: string, raw: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${name} must be a whole number from 1 to ${max}, got "${raw}"`);
  return n;
}

/** `--metrics-port`: 0 (a free port, printed) to 65535. */
function port(name: string, raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n > 65_535) throw new UsageError(`${name} must be a whole number from 0 to 65535, got "${raw}"`);
  return n;
}

function seconds(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 86_400) throw new UsageError(`${name} must be a number of seconds from 0 to 86400, got "${raw}"`);
  return n;
}

/**
 * `run <id> <flow> <status> <n> attempts <duration>`, and why when it did not end on its own; a run
 * taken over says how long it took here, then how long since it started (what its page shows).
 */
export function runEndLine(r: RunEnd): string {
  const why = r.note && r.status !== 'succeeded' ? ` (${r.note.split('\n')[0]!.slice(0, 200)})` : '';
  const taken = r.resumed ? ` taken over${r.sinceStartMs !== undefined ? ` (${fmtDuration(r.sinceStartMs)} since the run started)` : ''}` : '';
  return printable(`run ${r.runId} ${r.flow || '-'} ${r.status} ${r.attempts} attempt${r.attempts === 1 ? '' : 's'} ${fmtDuration(r.durationMs)}${taken}${why}`);
}

function statsLine(id: string, s: WorkerStats): string {
  const by = Object.entries(s.byStatus)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  return `worker ${id.slice(0, 8)}${s.draining ? ' draining' : ''}: ${s.running}/${s.concurrency} running, ${s.ended} ended${by ? ` (${by})` : ''}`;
}

/** One status line on a terminal's stderr, redrawn in place; cleared before any other line is written. */
class StatusLine {
  private shown = false;
  private last = '';
  constructor(private readonly stream: NodeJS.WriteStream) {}
  draw(text = this.last): void {
    this.last = text;
    if (!text) return;
    this.stream.write(`\r\x1b[2K${text.slice(0, (this.stream.columns || 120) - 1)}`);
    this.shown = true;
  }
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[2K');
    this.shown = false;
  }
}

export interface WorkerCommandOptions {
  concurrency?: string;
  simulate?: boolean;
  project?: string;
  drainTimeout?: string;
  /** serve this worker's GET /metrics on this port */
  metricsPort?: string;
  /** ... on this address (default loopback) */
  metricsHost?: string;
}

/** Where --metrics-port asks the worker to serve its GET /metrics (port null: nowhere). */
interface MetricsAt {
  port: number | null;
  host: string;
}

/** The worker's metrics server, when --metrics-port asks for one (before the first run is taken, so every run is counted); its URL logged. */
async function metricsServer(session: Session, at: MetricsAt, logs: ProcessLogs): Promise<MetricsServer | null> {
  if (at.port === null) return null;
  const metrics = processMetrics();
  let server: MetricsServer;
  try {
    server = await startMetricsServer({
      host: at.host,
      port: at.port,
      db: session.db,
      metrics,
      onError: (err) => logs.log.warn({ err: errorField(err, logs.safe) }, logs.safe(`a scrape of /metrics failed: ${queryErrorText(err)}`)),
    });
  } catch (err) {
    throw new UsageError(`cannot serve --metrics-port ${at.port} on ${at.host}: ${(err as Error).message}`);
  }
  logs.log.info({ metrics: server.url }, `metrics on ${server.url}`);
  return server;
}

/** `aqven worker`: takes queued runs until SIGINT/SIGTERM, then drains. Resolves with the exit status. */
export async function runWorkerCommand(opts: WorkerCommandOptions, env: Env = process.env, io: CliIo = processIo): Promise<number> {
  const say = (text: string) => io.err(`aqven worker: ${text}\n`);
  let session: Session | undefined;
  try {
    if (runModeKind(env) !== 'queue')
      throw new UsageError('needs AQVEN_DATABASE_URL=postgres://…: runs are queued only in PostgreSQL mode (in SQLite mode a run runs in the process that starts it)');
    logSettings(env); // AQVEN_LOG_FORMAT and AQVEN_LOG_LEVEL, checked before anything is opened
    const concurrency = positiveInt('--concurrency', opts.concurrency ?? String(DEFAULT_CONCURRENCY), 1000);
    const drainMs = seconds('--drain-timeout', opts.drainTimeout ?? String(DEFAULT_DRAIN_TIMEOUT_S)) * 1000;
    const simulate = simulateRequested(opts.simulate);
    const simUrl = simulate ? sharedSimulatorUrl(env) : null;
    const metricsAt: MetricsAt = { port: opts.metricsPort === undefined ? null : port('--metrics-port', opts.metricsPort), host: opts.metricsHost?.trim() || DEFAULT_METRICS_HOST };
    if (opts.metricsHost !== undefined && metricsAt.port === null) throw new UsageError('--metrics-host needs --metrics-port');
    await reachPg(databaseTarget('', env));
    session = await openSession(resolveProjectDir(opts.project, env), { simulate, env });
    return await serve(session, { concurrency, drainMs, simUrl, env, metricsAt }, io);
  } catch (err) {
    if (err instanceof ProjectInvalidError) for (const d of err.diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
    return exitFor(err, say, [[[UsageError, SimUrlError, NoSnapshotError, ProjectInvalidError, LogSettingError], EXIT_USAGE]]);
  } finally {
    await session?.close();
    if (session) await closeDatabase(session.db);
  }
}

/** What the worker says of a run it ended that the run's own lines do not: a refusal at its claim, a hand-back, a run lost. */
function runEndLog(logs: ProcessLogs, r: RunEnd): void {
  if (!r.refused && r.status !== 'handed back' && r.status !== 'lost') return; // the run's own end line says it (lib/observe/run-log.ts)
  const fields = {
    runId: r.runId,
    flow: r.flow || null,
    status: r.status,
    attempts: r.attempts,
    durationMs: r.durationMs,
    resumed: r.resumed,
    note: r.note ? logs.safe(r.note) : null,
  };
  const line = runEndLine(r);
  if (r.status === 'lost') logs.log.error(fields, line);
  else if (r.refused) logs.log.warn(fields, line);
  else logs.log.info(fields, line);
}

function runTakenLog(logs: ProcessLogs, r: RunTaken): void {
  const what = r.takenOver ? 'taken over (its lease had expired)' : `${r.flow} claimed`;
  logs.log.info({ runId: r.runId, flow: r.flow, takenOver: r.takenOver, fence: r.fence }, `run ${r.runId} ${what}`);
}

async function serve(session: Session, o: { concurrency: number; drainMs: number; simUrl: string | null; env: Env; metricsAt: MetricsAt }, io: CliIo): Promise<number> {
  // the status line is the terminal's: drawn only when the command writes to the process
  const status = io === processIo && process.stderr.isTTY ? new StatusLine(process.stderr) : null;
  const keys = Object.values(session.providers).map((p) => (p.apiKeyEnv ? (session.env[p.apiKeyEnv] ?? process.env[p.apiKeyEnv]) : undefined));
  const logs = startLogs({
    name: 'aqven worker',
    env: o.env,
    secrets: keys,
    bindings: { worker: PROCESS_OWNER },
    console: io === processIo,
    terminal: io === processIo && process.stdout.isTTY,
    write: (line) => {
      status?.clear();
      io.out(line);
      status?.draw();
    },
  });
  try {
    return await work(session, o, logs, status);
  } finally {
    logs.stop();
  }
}

async function work(
  session: Session,
  o: { concurrency: number; drainMs: number; simUrl: string | null; metricsAt: MetricsAt },
  logs: ProcessLogs,
  status: StatusLine | null,
): Promise<number> {
  const { log } = logs;
  // a missing key fails every call only after the transport's tries: say so before the first run
  for (const d of session.warnings) log.warn({ file: d.file, code: d.code }, formatDiagnostic(d));
  const metrics = await metricsServer(session, o.metricsAt, logs);
  // the runs' spans, when the environment asks for traces
  const tracing = await commandTracing((line) => log.warn(line));
  try {
    return await takeRuns(session, o, logs, status);
  } finally {
    // the drained runs' spans (ended, or handed back) are sent before the worker goes
    await tracing?.shutdown();
    await metrics?.close();
  }
}

async function takeRuns(session: Session, o: { concurrency: number; drainMs: number; simUrl: string | null }, logs: ProcessLogs, status: StatusLine | null): Promise<number> {
  const { log } = logs;
  let id = '';
  const worker = await QueueWorker.start({
    session,
    concurrency: o.concurrency,
    onRunEnd: (r) => runEndLog(logs, r),
    onRunTaken: (r) => runTakenLog(logs, r),
    onChange: (s) => status?.draw(statsLine(id, s)),
    onWarning: (text) => log.warn(logs.safe(text)),
    onQueueLog: (level, message) => log[level === 'error' ? 'error' : 'warn']({ source: 'graphile-worker' }, `graphile-worker ${level}: ${logs.safe(message)}`),
  });
  id = worker.id;
  // aqven.yaml's alerts: every run's failures, and the periodic pause and queue rules over the newest snapshot
  const alerts = startAlerts({ periodic: async () => ({ db: session.db, project: (await worker.current()).project }), onWarning: (text) => log.warn(logs.safe(text)) });
  const sim = session.simulated ? `; providers simulated${o.simUrl ? ` by ${o.simUrl}` : ' in this process'}` : '';
  log.info(
    { database: session.db.name, snapshot: session.snapshotId, concurrency: o.concurrency, simulated: session.simulated !== null, simulator: o.simUrl },
    `${id} on ${session.db.name}, snapshot ${session.snapshotId}, concurrency ${o.concurrency}${sim}; waiting for runs`,
  );
  status?.draw(statsLine(id, worker.stats()));

  // until a signal, or the queue fails
  let second: 'SIGINT' | 'SIGTERM' | null = null;
  let first: 'SIGINT' | 'SIGTERM' | null = null;
  let stop!: (why: 'SIGINT' | 'SIGTERM' | Error) => void;
  const stopped = new Promise<'SIGINT' | 'SIGTERM' | Error>((resolve) => (stop = resolve));
  const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
    if (first) {
      // a second signal: no more waiting for the runs in progress
      second ??= sig;
      log.warn({ signal: sig }, `${sig} again: handing the runs in progress back now`);
      worker.cutDrainShort();
      setTimeout(() => {
        interruptAllNow(`stopped by ${sig}`);
        process.exit(SIGNAL_EXIT[sig]);
      }, HAND_BACK_EXIT_MS).unref();
      return;
    }
    first = sig;
    stop(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // graphile-worker completes a job on connections of its own and lets a failure there (the database
  // restarting at that moment) reject with nobody to catch it: said in one line, and the worker goes
  // on — the run is recorded already, and the job left locked is what the stuck-job sweep finds.
  // Anything else unhandled stops the worker as a failed queue does: drained, never a stack.
  const onUnhandled = (err: unknown) => {
    if (isConnectionLoss(err))
      return log.warn(logs.safe(`the database connection was lost while graphile-worker finished a job (its sweep finds the job again): ${pgReason(err)}`));
    log.error({ err: errorField(err, logs.safe) }, logs.safe(`an unexpected failure: ${queryErrorText(err)}`));
    stop(err instanceof Error ? err : new Error(String(err)));
  };
  process.on('unhandledRejection', onUnhandled);
  worker.queueDone.then(
    () => stop(new Error('graphile-worker stopped')),
    (err: unknown) => stop(err instanceof Error ? err : new Error(String(err))),
  );
  try {
    const why = await stopped;
    const reason = why instanceof Error ? `the queue failed: ${pgReason(why)}` : `stopped by ${why}`;
    const running = worker.stats().running;
    const draining = `${why instanceof Error ? reason : why}: draining — no new runs${running ? `; ${running} in progress may finish within ${fmtDuration(o.drainMs)}, then are handed back` : ''}`;
    if (why instanceof Error) log.error({ running, drainMs: o.drainMs }, logs.safe(draining));
    else log.info({ signal: why, running, drainMs: o.drainMs }, draining);
    const drained = await worker.drain(o.drainMs, reason);
    status?.clear();
    log.info({ finished: drained.finished, handedBack: drained.handedBack }, `stopped: ${drained.finished} finished while draining, ${drained.handedBack} handed back`);
    if (why instanceof Error) return EXIT_QUEUE_FAILED;
    return second ? SIGNAL_EXIT[second] : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('unhandledRejection', onUnhandled);
    await alerts.stop();
  }
}

/** `aqven cancel RUN_ID`: a queued run is cancelled and its job removed; anything else is said and left alone. */
export async function runCancelCommand(runId: string, env: Env = process.env, io: CliIo = processIo): Promise<number> {
  const say = (text: string) => io.err(`aqven cancel: ${text}\n`);
  const parsed = cancelRunSchema.safeParse({ runId });
  if (!parsed.success) {
    say(firstIssue(parsed.error, ['runId'], { runId: 'the run id' }).message);
    return EXIT_USAGE;
  }
  try {
    // the run mode, decided once: SQLite mode queues nothing, so there is nothing to cancel
    const queue = await openQueueMode(env);
    if (!queue) {
      say(`${NOTHING_QUEUED} (set AQVEN_DATABASE_URL=postgres://… to queue runs)`);
      return EXIT_NOT_CANCELLED;
    }
    try {
      // a short id or a unique prefix names the run; an ambiguous one lists the runs it names
      const named = await cliRunId(queue.mode.db, 'cancel', runId);
      if (!named.ok) {
        io.err(`${named.message}\n`);
        return named.exitCode === 2 ? EXIT_USAGE : EXIT_NOT_CANCELLED;
      }
      const id = named.id;
      const res = await queue.mode.cancel(id);
      if (res.cancelled) {
        io.out(`run ${id} cancelled\n`);
        return 0;
      }
      say(res.status === null ? `no run with id ${id}` : `run ${id} is ${res.status}, not queued: not cancelled`);
      return EXIT_NOT_CANCELLED;
    } finally {
      await queue.close();
    }
  } catch (err) {
    return exitFor(err, say, [[[UsageError], EXIT_USAGE]]);
  }
}

export function registerQueue(program: Command, io: CliIo = processIo): void {
  program
    .command('worker')
    .description('PostgreSQL mode: take queued runs and run them, until SIGINT/SIGTERM (then drain)')
    .option('--concurrency <n>', `runs at once (default ${DEFAULT_CONCURRENCY})`)
    .option('--simulate', 'route every provider to a simulator: AQVEN_SIM_URL when set, else one in this process (also AQVEN_SIMULATE=1)')
    .option('--project <dir>', `${PROJECT_HELP}, pushed as the first snapshot when the database has none`)
    .option('--drain-timeout <s>', `after a stop signal, how long the runs in progress may take before they are handed back (default ${DEFAULT_DRAIN_TIMEOUT_S})`)
    .option('--metrics-port <port>', "serve this worker's Prometheus metrics on GET /metrics at this port (0: a free one, printed)")
    .option('--metrics-host <host>', `the address of --metrics-port (default ${DEFAULT_METRICS_HOST}); beyond loopback a scrape needs a token made with --scope metrics`)
    .action(async (opts: WorkerCommandOptions) => io.exit(await runWorkerCommand(opts, process.env, io)));

  program
    .command('cancel')
    .description('PostgreSQL mode: cancel a queued run (one no worker has started)')
    .argument('<runId>', 'run id, or its short id (a prefix of 4 or more of either)')
    .action(async (runId: string) => io.exit(await runCancelCommand(runId, process.env, io)));
}
