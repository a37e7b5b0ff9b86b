// `aqven replay RUN NODE` (DESIGN: CLI; The dashboard, "Replay with the current policy"): runs one
// node of a finished run again with its original inputs under the project's files as they are now,
// as a new run of kind `replay` linked to the original, and prints it. Prints the prompt diff and
// the estimate to stderr first. Exit statuses: 0 the replay succeeded, 1 it did not, 2 refused (no
// such run or node, an input never produced, the estimate over --cap), 3 cannot record, 130 SIGINT.
import type { Command } from 'commander';
import { closeDatabase } from '@/db/client';
import { StorageError } from '@/db/storage-error';
import { estimateBasis, estimateReplay, planReplay, policyChanges, promptDiff, ReplayRefusedError, startReplay } from '@/lib/flow/replay';
import { RunInterruptedError } from '@/lib/flow/run-flow';
import { openSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { fmtCost } from '@/lib/shared/cost-text';
import { simulateRequested } from '@/lib/flow/simulate';
import { formatDiagnostic } from '@/lib/project';
import { recordAfterLookup } from './cut-off-lookup';
import { formatAmbiguous } from './find-runs';
import { formatRun } from './format-run';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';
import { printable } from './printable';
import { cliRunStart } from './cli-caller';
import { processIo, type CliIo } from './io';
import { firstIssue, type Labels } from '@/lib/contracts/refusal';
import { REPLAY_NODE_FIELDS, replayNodeSchema, type ReplayNodeField } from '@/lib/contracts/replay';

interface ReplayOptions {
  project?: string;
  simulate?: boolean;
  cap?: string;
  json?: boolean;
}

/** the arguments as the command names them, in a refusal's words */
const ARGS: Labels<ReplayNodeField> = { runId: 'the run id', node: 'the node id', cap: '--cap' };

/** the contract's, with --cap left out allowed */
const REPLAY_ARGS = replayNodeSchema.extend({ cap: replayNodeSchema.shape.cap.optional() });

/** `aqven replay RUN NODE …`; returns the exit status. Without --cap the replay has no cap (a shell on the server). */
export async function runReplay(runId: string, node: string, opts: ReplayOptions, io: CliIo = processIo): Promise<number> {
  const parsed = REPLAY_ARGS.safeParse({ runId, node, cap: opts.cap });
  if (!parsed.success) {
    io.err(`aqven replay: ${firstIssue(parsed.error, REPLAY_NODE_FIELDS, ARGS).message}\n`);
    return 2;
  }
  const cap = parsed.data.cap ?? null;
  let session: Session | undefined;
  const ac = new AbortController();
  const onSigint = () => ac.abort(new RunInterruptedError('stopped by SIGINT'));
  const say = (line: string) => io.err(`${line}\n`);
  try {
    session = await openSession(resolveProjectDir(opts.project), { simulate: simulateRequested(opts.simulate) });
    const s = session;
    const { author, refused } = await cliRunStart(s.db);
    if (refused) {
      say(`aqven replay: ${refused.code} ${refused.message}`);
      return 2;
    }
    // a missing key fails every call only after the transport's tries: said before the replay, as `aqven run` does
    for (const d of s.warnings) say(formatDiagnostic(d));
    const plan = await planReplay(s.db, s.project, runId, node);
    const diff = promptDiff(plan);
    const estimate = await estimateReplay(s.db, plan);
    say(`replay of node ${node} of run ${plan.runId} (${plan.original.status}) under the current files${s.simulated ? ', simulated providers' : ''}`);
    for (const change of policyChanges(plan.policyBefore, plan.policyNow)) say(`  policy ${change}`);
    say(diff.changed ? 'request, original ⇒ now:' : 'request: the same as the original’s');
    if (diff.changed) for (const l of diff.lines) if (l.op !== ' ') say(`  ${l.op} ${printable(l.text)}`);
    say(`estimate ${fmtCost(estimate.costUsd)}: ${estimateBasis(estimate)}${cap === null ? '' : `; cap ${fmtCost(cap)}`}`);
    process.on('SIGINT', onSigint);
    const started = await startReplay(
      plan,
      { project: s.project, providers: s.providers, env: s.env, db: s.db, snapshotId: s.snapshotId, projectHash: s.projectHash, startedBy: author },
      { capUsd: cap, estimateUsd: estimate.costUsd, signal: ac.signal },
    );
    const result = await started.done;
    const shown = ac.signal.aborted ? result.record : await recordAfterLookup('replay', s, result.record);
    io.out(opts.json ? `${JSON.stringify(shown, null, 2)}\n` : `${formatRun(shown)}\n`);
    return ac.signal.aborted && !result.capped ? 130 : result.status === 'succeeded' ? 0 : 1;
  } catch (err) {
    if (err instanceof ReplayRefusedError) {
      // an ambiguous short id: the runs it names, listed as `aqven show` lists them
      say(err.ambiguous ? formatAmbiguous('replay', runId, err.ambiguous.matches, err.ambiguous.more) : `aqven replay: ${err.code} ${err.message}`);
      return 2;
    }
    if (err instanceof ProjectInvalidError) {
      for (const d of err.diagnostics) if (d.severity === 'error') say(formatDiagnostic(d));
      say(`aqven replay: ${err.message}`);
      return 2;
    }
    if (err instanceof StorageError) {
      say(`aqven replay: ${err.message}; no provider was called`);
      return 3;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSigint);
    await session?.close();
    if (session) await closeDatabase(session.db);
  }
}

export function registerReplay(program: Command, io: CliIo = processIo): void {
  program
    .command('replay')
    .description('run one node of a finished run again, with its original inputs, under the current files')
    .argument('<runId>', 'the run whose node to replay: its id, short id or a unique prefix')
    .argument('<node>', 'the node id')
    .option('--project <dir>', PROJECT_HELP)
    .option('--simulate', 'route every provider to the in-process simulator (also AQVEN_SIMULATE=1)')
    .option('--cap <usd>', 'refuse when the estimate is over this many USD; stop before the next attempt once spent')
    .option('--json', 'print the replay run record as JSON')
    .action(async (runId: string, node: string, opts: ReplayOptions) => io.exit(await runReplay(runId, node, opts, io)));
}
