// The errors a run ends its caller's wait with (DESIGN: flows/NAME.yaml, Storage): a refused input,
// an unknown flow, a stop from outside, and a run that could not be recorded to its end.
import type { LeaseLostError } from '@/db/run-lease';
import { StorageError } from '@/db/storage-error';
import type { RunRecord } from './run-record';

export class RunInputError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'RunInputError';
  }
}

export class UnknownFlowError extends Error {
  constructor(
    readonly flow: string,
    known: string[],
  ) {
    super(`unknown flow "${flow}"; the project has: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownFlowError';
  }
}

/** A run stopped from outside — a signal, a caller's abort: it ends `interrupted`. */
export class RunInterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunInterruptedError';
  }
}

/** A stop that hands the run back (StartedRun.handBack): the run is not ended. */
export class RunHandedBack extends RunInterruptedError {
  constructor(reason: string) {
    super(`handed back (${reason}); another worker resumes it`);
  }
}

/**
 * A run that could not be recorded to its end: its facts could not be written (`reason` a
 * StorageError: the run is then recorded as failed with code cannot_record, if even that can be
 * written — `recorded`) or were refused (a LeaseLostError: another process marked it interrupted).
 * `record` is the run as this process saw it.
 */
export class RunNotRecordedError extends Error {
  constructor(
    readonly reason: StorageError | LeaseLostError,
    readonly record: RunRecord,
    readonly recorded: boolean,
  ) {
    super(
      reason instanceof StorageError
        ? `${reason.message}${recorded ? `; run ${record.id} was stopped and is recorded as failed (cannot_record)` : `; run ${record.id} was stopped, and the next start marks it interrupted`}`
        : reason.message,
    );
    this.name = 'RunNotRecordedError';
  }
}
