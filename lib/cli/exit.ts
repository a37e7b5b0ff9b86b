// What the PostgreSQL-mode commands (`aqven db`, `project`, `worker`, `cancel`) do with a failure
// they know (DESIGN: CLI, exit codes): say its message as one line and exit with its status — the
// database unreachable or unwritable is 3 for all of them; each command adds its own classes. An
// error none of them knows is a bug: rethrown (exit 70 in main.ts).
import { DatabaseUrlError, StorageError } from '@/db/storage-error';
import { DatabaseUnreachableError } from '@/db/status-queries';

/** bad usage or configuration */
export const EXIT_USAGE = 2;
/** the database cannot be reached or opened */
export const EXIT_CANNOT_OPEN = 3;
/** `aqven run`: the run database cannot be written (nothing was called, or the run was stopped) */
export const EXIT_CANNOT_RECORD = 3;
/** the status of a command a stop signal ended: 128 + the signal's number */
export const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };

export { UsageError } from './usage-error';

type ErrorClass = abstract new (...args: never[]) => Error;

/** Error classes and the exit status a command gives them, checked in order. */
export type ExitRules = readonly (readonly [readonly ErrorClass[], number])[];

/** The exit status of `err` by `rules` (then an AQVEN_DATABASE_URL naming no database: 2; the database's own failures: 3), its message said by `say`; rethrows an unknown error. */
export function exitFor(err: unknown, say: (text: string) => void, rules: ExitRules): number {
  const always: ExitRules = [
    [[DatabaseUrlError], EXIT_USAGE],
    [[StorageError, DatabaseUnreachableError], EXIT_CANNOT_OPEN],
  ];
  for (const [classes, code] of [...rules, ...always]) {
    if (classes.some((c) => err instanceof c)) {
      say((err as Error).message);
      return code;
    }
  }
  throw err;
}
