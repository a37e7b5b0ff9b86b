// `aqven runs reconcile [--project DIR] [--wait SECONDS] [--json] [--simulate]` (DESIGN: CLI; Usage
// unknown, never zero): looks up, from the provider, the usage of answers cut off after a 2xx that
// named their generation — one pass, or passes until nothing is pending or --wait runs out — and
// says what it found. Exit statuses: 0 nothing left pending, 1 some lookups still pending (run it
// again later), 2 bad usage or a project failing check, 3 the database cannot be opened.
import type { Command } from 'commander';
import { closeDatabase } from '@/db/client';
import { openSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { simulateRequested } from '@/lib/flow/simulate';
import { describeLookups, lookUpUntilDone, lookUpUsage, type LookupPass } from '@/lib/flow/usage-lookup';
import { formatDiagnostic } from '@/lib/project';
import { EXIT_USAGE, UsageError, exitFor } from './exit';
import { type CliIo, processIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';

export interface RunsReconcileOptions {
  project?: string;
  /** seconds to keep looking up while lookups are pending (default 0: one pass) */
  wait?: string;
  json?: boolean;
  simulate?: boolean;
  env?: Record<string, string | undefined>;
  /** the clock (tests) */
  now?: () => number;
}

/** exit status 1: lookups are still pending */
export const EXIT_PENDING = 1;
const MAX_WAIT_S = 3600;

export async function runRunsReconcile(opts: RunsReconcileOptions, io: CliIo = processIo): Promise<number> {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const say = (text: string) => io.err(`aqven runs reconcile: ${text}\n`);
  let session: Session | undefined;
  try {
    const wait = opts.wait === undefined ? 0 : Number(opts.wait);
    if (!Number.isFinite(wait) || wait < 0 || wait > MAX_WAIT_S) throw new UsageError(`--wait must be a number of seconds from 0 to ${MAX_WAIT_S}, got "${opts.wait}"`);
    try {
      session = await openSession(resolveProjectDir(opts.project, env), { env, simulate: simulateRequested(opts.simulate) });
    } catch (err) {
      if (!(err instanceof ProjectInvalidError)) throw err;
      for (const d of err.diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
      throw new UsageError(`${err.message} (the project names the providers to ask)`);
    }
    const o = { providers: session.providers, env: session.env, now, simulated: session.simulated !== null };
    const pass: LookupPass = wait > 0 ? await lookUpUntilDone(session.db, { ...o, deadline: now() + wait * 1000 }) : await lookUpUsage(session.db, o);
    if (opts.json) io.out(`${JSON.stringify(pass, null, 2)}\n`);
    else {
      const lines = [describeLookups(pass, now()), ...pass.notes.map((n) => `  ${n}`)];
      if (pass.pending) lines.push('Run `aqven runs reconcile` again later (or with --wait SECONDS) to finish.');
      io.out(`${lines.join('\n')}\n`);
    }
    return pass.pending ? EXIT_PENDING : 0;
  } catch (err) {
    return exitFor(err, say, [[[UsageError], EXIT_USAGE]]);
  } finally {
    await session?.close();
    if (session) await closeDatabase(session.db);
  }
}

/** `aqven runs reconcile`, under the `runs` command (made here when it is not there yet). */
export function registerRunsReconcile(program: Command, io: CliIo = processIo): Command {
  const runs = program.commands.find((c) => c.name() === 'runs') ?? program.command('runs').description('the run history');
  return runs
    .command('reconcile')
    .description('look up, from the provider, the usage of answers cut off after a 2xx (usage unknown) and add it to their runs')
    .option('--project <dir>', `${PROJECT_HELP}; AQVEN_DATABASE_URL names the database when set`)
    .option('--wait <seconds>', 'keep looking up while lookups are pending, this long at most (default: one pass)')
    .option('--json', 'print JSON')
    .option('--simulate', 'ask the simulator (AQVEN_SIM_URL, or an in-process one) instead of the providers')
    .action(async (_opts: unknown, cmd: Command) => {
      // `runs` has --project and --json of its own and reads them wherever they stand: merged here
      const o = cmd.optsWithGlobals<{ project?: string; wait?: string; json?: boolean; simulate?: boolean }>();
      io.exit(await runRunsReconcile({ project: o.project, wait: o.wait, json: o.json, simulate: o.simulate }, io));
    });
}
