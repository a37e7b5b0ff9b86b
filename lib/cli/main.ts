// The `aqven` command (DESIGN: CLI), built into dist/cli by scripts/build-cli.mjs and started by bin/aqven.mjs.
import { Command } from 'commander';
import { DatabaseUrlError, StorageError } from '@/db/storage-error';
import { version } from '../../package.json';
import { UsageError } from './usage-error';

type Register = (program: Command) => unknown;

// `runs purge` hangs under `runs`: registered right after it
const loadRun = () =>
  Promise.all([import('./run'), import('./runs-purge'), import('./runs-reconcile')]).then(([m, purge, reconcile]): Register => (p) => {
    m.registerRun(p);
    purge.registerRunsPurge(p);
    reconcile.registerRunsReconcile(p);
  });
const loadQueue = () => import('./queue').then((m): Register => m.registerQueue);
// each subcommand's module is imported only when asked for: `aqven check` never loads SQLite or the simulator
const COMMANDS: Record<string, () => Promise<Register>> = {
  check: () =>
    import('./check').then(
      (m): Register =>
        (p) =>
          m.registerCheck(p),
    ),
  run: loadRun,
  runs: loadRun,
  show: loadRun,
  search: loadRun,
  sim: () => import('./sim').then((m): Register => m.registerSim),
  init: () =>
    import('./init').then(
      (m): Register =>
        (p) =>
          m.registerInit(p),
    ),
  project: () => import('./project').then((m): Register => m.registerProject),
  db: () => import('./db').then((m): Register => m.registerDb),
  worker: loadQueue,
  cancel: loadQueue,
  replay: () => import('./replay').then((m): Register => m.registerReplay),
  limits: () => import('./limits').then((m): Register => m.registerLimits),
  user: () =>
    import('./users').then(
      (m): Register =>
        (p) =>
          m.registerUsers(p),
    ),
  token: () =>
    import('./tokens').then(
      (m): Register =>
        (p) =>
          m.registerTokens(p),
    ),
  audit: () =>
    import('./audit').then(
      (m): Register =>
        (p) =>
          m.registerAudit(p),
    ),
  // only `aqven serve` loads Next.js, and only once it starts the dashboard
  serve: () =>
    import('./serve').then(
      (m): Register =>
        (p) =>
          m.registerServe(p),
    ),
};

/** The modules the command line needs: its subcommand's; none for --version; all for help or an unknown command. */
function loadersFor(args: string[]): (() => Promise<Register>)[] {
  const name = args.find((a) => !a.startsWith('-'));
  if (name && Object.hasOwn(COMMANDS, name)) return [COMMANDS[name]!];
  if (!name && args.some((a) => a === '-V' || a === '--version')) return [];
  return [...new Set(Object.values(COMMANDS))];
}

const program = new Command('aqven')
  .description('Run LLM flows where every call ends ok, error, refusal or truncated — and see what happened')
  .version(version, '-V, --version', 'print the aqven version')
  .showHelpAfterError()
  // commander's own usage errors (unknown option, missing argument) exit 2, like ours
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

/**
 * A reader that went away (`aqven check | head -1`) ends the command quietly, as SIGPIPE ends other
 * tools: nothing on stderr, the exit status the command has set by then (0 if none). The exit waits
 * for the code already running, so a command that wrote its last line still sets its status.
 */
function endQuietlyOnClosedOutput(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    setImmediate(() => process.exit(process.exitCode ?? 0));
  });
}
endQuietlyOnClosedOutput(process.stdout);
endQuietlyOnClosedOutput(process.stderr);

async function main(): Promise<void> {
  const registers = await Promise.all(loadersFor(process.argv.slice(2)).map((load) => load()));
  for (const register of registers) register(program);
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  // the database cannot be written: one line naming the path and the fix, exit 3 (DESIGN: CLI)
  if (err instanceof StorageError) {
    console.error(`aqven: ${err.message}`);
    process.exit(3);
  }
  // bad usage no command caught (an empty or file --project), or AQVEN_DATABASE_URL naming no database AQVEN opens: exit 2
  if (err instanceof UsageError || err instanceof DatabaseUrlError) {
    console.error(`aqven: ${err.message}`);
    process.exit(2);
  }
  console.error(`aqven: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(70);
});
