// `aqven run` under SIGINT/SIGTERM (DESIGN: CLI, exit statuses): the first signal interrupts the run,
// which records itself interrupted; a second one, or a run that takes longer than SIGNAL_EXIT_MS to
// stop, has what is left recorded synchronously and the process exits with the signal's status.
import { interruptAllNow } from '@/lib/flow/active-runs';
import { RunInterruptedError } from '@/lib/flow/run-flow';
import { SIGNAL_EXIT } from './exit';
import type { CliIo } from './io';

/** after a stop signal, the longest wait for the run to record itself before the process exits anyway */
export const SIGNAL_EXIT_MS = 4_000;

/**
 * While `f` runs, SIGINT and SIGTERM abort `ac` (the run records itself interrupted and `f` ends);
 * if that takes longer than SIGNAL_EXIT_MS, or a second signal comes, what is left is recorded
 * synchronously and the process exits. Returns the exit status a signal asks for, or null.
 */
export async function underStopSignals<T>(ac: AbortController, io: CliIo, f: () => Promise<T>): Promise<{ value: T; signalExit: number | null }> {
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
      io.err(`aqven run: the run did not stop within ${SIGNAL_EXIT_MS / 1000} s of ${sig}; recorded as interrupted\n`);
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
