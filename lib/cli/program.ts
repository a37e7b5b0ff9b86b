// The `aqven` command line as a function (DESIGN: CLI): the subcommands it names, registered on a
// fresh program whose output and exit status go through a CliIo. lib/cli/main.ts runs it for the
// process; tests run it in their own process with captureIo (bad arguments, exit statuses, output).
import { Command, CommanderError } from 'commander';
import { DatabaseUrlError, StorageError } from '@/db/storage-error';
import { version } from '../../package.json';
import type { CliIo } from './io';
import { UsageError } from './usage-error';

type Register = (program: Command, io: CliIo) => unknown;

// `runs purge` hangs under `runs`: registered right after it
const loadRun = () =>
  Promise.all([import('./run'), import('./runs-purge'), import('./runs-reconcile')]).then(([m, purge, reconcile]): Register => (p, io) => {
    m.registerRun(p, io);
    purge.registerRunsPurge(p, io);
    reconcile.registerRunsReconcile(p, io);
  });
const loadQueue = () => import('./queue').then((m): Register => m.registerQueue);
// each subcommand's module is imported only when asked for: `aqven check` never loads SQLite or the simulator
const COMMANDS: Record<string, () => Promise<Register>> = {
  check: () => import('./check').then((m): Register => m.registerCheck),
  explain: () => import('./explain').then((m): Register => m.registerExplain),
  run: loadRun,
  runs: loadRun,
  show: loadRun,
  search: loadRun,
  sim: () => import('./sim').then((m): Register => m.registerSim),
  init: () => import('./init').then((m): Register => m.registerInit),
  project: () => import('./project').then((m): Register => m.registerProject),
  db: () => import('./db').then((m): Register => m.registerDb),
  worker: loadQueue,
  cancel: loadQueue,
  replay: () => import('./replay').then((m): Register => m.registerReplay),
  limits: () => import('./limits').then((m): Register => m.registerLimits),
  user: () => import('./users').then((m): Register => m.registerUsers),
  token: () => import('./tokens').then((m): Register => m.registerTokens),
  audit: () => import('./audit').then((m): Register => m.registerAudit),
  alerts: () => import('./alerts').then((m): Register => m.registerAlerts),
  // only `aqven serve` loads Next.js, and only once it starts the dashboard
  serve: () => import('./serve').then((m): Register => m.registerServe),
};

/** The modules the command line needs: its subcommand's; none for --version; all for help or an unknown command. */
function loadersFor(args: string[]): (() => Promise<Register>)[] {
  const name = args.find((a) => !a.startsWith('-'));
  if (name && Object.hasOwn(COMMANDS, name)) return [COMMANDS[name]!];
  if (!name && args.some((a) => a === '-V' || a === '--version')) return [];
  return [...new Set(Object.values(COMMANDS))];
}

/**
 * The exit status and line of an error that ended a command line: the database cannot be written
 * 3, bad usage (an empty or file --project, an AQVEN_DATABASE_URL naming no database AQVEN opens) 2,
 * anything else 70 with its stack.
 */
export function failureOf(err: unknown): { code: number; line: string } {
  if (err instanceof StorageError) return { code: 3, line: `aqven: ${err.message}` };
  if (err instanceof UsageError || err instanceof DatabaseUrlError) return { code: 2, line: `aqven: ${err.message}` };
  return { code: 70, line: `aqven: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` };
}

/**
 * Runs the command line `args` (without `node aqven`). Returns the exit status when the line ended
 * early — help, --version, commander's usage errors (2), a failure (failureOf) — its text written
 * to `io`; null when a command ran, which set its status through `io.exit`.
 */
/** The program with the subcommands `loaders` register; its output goes to `io`. */
async function buildProgram(io: CliIo, loaders: (() => Promise<Register>)[]): Promise<Command> {
  const program = new Command('aqven')
    .description('Run LLM flows where every call ends ok, error, refusal or truncated — and see what happened')
    .version(version, '-V, --version', 'print the aqven version')
    .configureOutput({ writeOut: (t) => io.out(t), writeErr: (t) => io.err(t) })
    .showHelpAfterError()
    .exitOverride();
  const registers = await Promise.all(loaders.map((load) => load()));
  // the subcommands inherit the program's output and exit override: commander's usage errors exit 2, like ours
  for (const register of registers) register(program, io);
  return program;
}

/** The whole command line, every subcommand registered, for reading its definitions (docs/cli-reference.md); runs nothing. */
export function allCommands(io: CliIo): Promise<Command> {
  return buildProgram(io, [...new Set(Object.values(COMMANDS))]);
}

export async function runCli(args: string[], io: CliIo): Promise<number | null> {
  try {
    const program = await buildProgram(io, loadersFor(args));
    await program.parseAsync(args, { from: 'user' });
    return null;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    const { code, line } = failureOf(err);
    io.err(line);
    return code;
  }
}
