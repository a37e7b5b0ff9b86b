// Where a run stands (DESIGN: Storage, "Leases", "Durable points"): running its turns, settling
// once they are over, or stopped early — and then by what, which decides how it is closed.
import { explainHint } from '@/lib/shared/run-codes';
import { INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { LeaseLostError } from '@/db/run-lease';
import { StorageError } from '@/db/storage-error';
import { RunHandedBack, RunInterruptedError } from './run-errors';

export type RunPhase =
  | { kind: 'running' }
  /** the turns are over and the run is being settled: a hand-back comes too late */
  | { kind: 'settling' }
  /** stopped from outside (a signal, interruptAll, a caller's abort): it ends `interrupted` */
  | { kind: 'interrupted'; reason: Error }
  /** stopped without ending it (a worker draining): its lease is released for another worker to resume it */
  | { kind: 'handed-back'; reason: RunHandedBack }
  /** its facts could not be written: it ends `failed` with cannot_record, if even that can be written */
  | { kind: 'unrecordable'; reason: StorageError }
  /** its writes were refused: another process marked it interrupted and may have taken it over */
  | { kind: 'lost'; reason: LeaseLostError };

export type StoppedPhase = Exclude<RunPhase, { kind: 'running' | 'settling' }>;

/** The phase a stop for `reason` puts the run in. */
export function stoppedBy(reason: Error): StoppedPhase {
  if (reason instanceof RunHandedBack) return { kind: 'handed-back', reason };
  if (reason instanceof StorageError) return { kind: 'unrecordable', reason };
  if (reason instanceof LeaseLostError) return { kind: 'lost', reason };
  return { kind: 'interrupted', reason };
}

export function isStopped(phase: RunPhase): phase is StoppedPhase {
  return phase.kind !== 'running' && phase.kind !== 'settling';
}

/** The words of a stop, for the nodes and attempts it cut off. */
export function stopWords(reason: Error): { code: string; message: string; hint: string } {
  if (reason instanceof StorageError) {
    return { code: 'cannot_record', message: reason.message, hint: explainHint('cannot_record', 'Fix the storage problem named above, then start the run again.') };
  }
  const message = reason instanceof RunInterruptedError ? `the run was ${reason.message}` : reason.message;
  return { code: INTERRUPTED_NODE_ERROR.code, message, hint: INTERRUPTED_NODE_ERROR.hint };
}
