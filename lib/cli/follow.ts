// `aqven show ID --follow` (DESIGN: CLI; "A run's events"): follows a queued or running run — run
// here, by another `aqven run`, a dashboard or a worker — through its events as the database holds
// them (followRun, the source of GET /api/runs/:id/events), drawing `aqven run`'s progress block on
// a terminal; when the run ends, prints it as `aqven show` does and exits as `aqven run` would: 0
// succeeded, 1 any other end. Ctrl-C (or SIGTERM) stops following, never the run: 130 (143).
import type { Db } from '@/db/types';
import { followRun } from '@/lib/flow/run-event-source';
import { getRunRecord } from '@/lib/flow/stored-run';
import { shortRunId } from '@/lib/shared/short-id';
import { SIGNAL_EXIT } from './exit';
import { formatRun, LiveProgress, type ProgressStream } from './format-run';
import type { CliIo } from './io';

export interface FollowCommandOptions {
  json?: boolean;
  /** where the progress block is drawn; default stderr when it is a terminal (and not --json) */
  progress?: ProgressStream | null;
  /** the follow's polling, for tests */
  pollMs?: number;
}

/** Stops following on SIGINT or SIGTERM (the run goes on); resolves with that signal's status, or null. */
function untilStopSignal(ac: AbortController): { exit: () => number | null; off: () => void } {
  let exit: number | null = null;
  const stop = (sig: 'SIGINT' | 'SIGTERM') => () => {
    exit = SIGNAL_EXIT[sig];
    ac.abort();
  };
  const onInt = stop('SIGINT');
  const onTerm = stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return { exit: () => exit, off: () => (process.off('SIGINT', onInt), process.off('SIGTERM', onTerm)) };
}

/** Follows run `runId` (its full id) in `db` to its end; the exit status. */
export async function followShown(db: Db, runId: string, opts: FollowCommandOptions, io: CliIo): Promise<number> {
  const stream = opts.progress !== undefined ? opts.progress : !opts.json && process.stderr.isTTY ? process.stderr : null;
  const live = stream ? new LiveProgress(stream) : null;
  const ac = new AbortController();
  const stop = untilStopSignal(ac);
  const short = shortRunId(runId);
  try {
    for await (const item of followRun(db, runId, { signal: ac.signal, pollMs: opts.pollMs })) {
      if (item.kind === 'gone') {
        io.err(`aqven show: run ${runId} is no longer stored\n`);
        return 1;
      }
      if (item.kind !== 'event') continue;
      if (item.event.type === 'run.queued') io.err(`run ${short} is queued: waiting for a worker\n`);
      live?.onRunEvent(item.event);
    }
  } finally {
    stop.off();
  }
  const signalExit = stop.exit();
  if (signalExit !== null) {
    io.err(`aqven show: stopped following; run ${short} goes on (aqven show ${short} --follow)\n`);
    return signalExit;
  }
  const record = await getRunRecord(db, runId);
  if (!record) return (io.err(`aqven show: run ${runId} is no longer stored\n`), 1);
  io.out(opts.json ? `${JSON.stringify(record, null, 2)}\n` : `${formatRun(record)}\n`);
  return record.status === 'succeeded' ? 0 : 1;
}
