// How runs run (DESIGN: Storage, "Workers and the queue"), decided once: when a session opens
// (openSession takes it from the database the session opened), or, for a command that opens no
// session, from the environment (runModeKind). Nothing else asks which database it is on.
//
//   in-process — SQLite: a run runs in the process that starts it; nothing is queued, nothing can
//                be cancelled from outside; a long-lived process sweeps the runs of dead
//                processes (marked interrupted).
//   queue      — PostgreSQL: a run started from the dashboard, the API or `aqven run --queue`
//                becomes a job for `aqven worker` (its row and job in one transaction); a queued
//                run can be cancelled; the workers take dead runs over, so nobody sweeps them.
//
// `aqven run` without --queue runs its flow in its own process in either mode (lib/cli/run.ts).
import { queueDatabase, sharedDatabaseUrl, sweepExpiredRuns } from '@/db/client';
import { openSharedForCommand } from '@/db/command-database';
import { LEASE_SWEEP_MS } from '@/db/run-lease';
import { StorageError } from '@/db/storage-error';
import type { Db, PgDb } from '@/db/types';
import type { ResolvedProvider } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import { newRecordId } from '@/lib/shared/record-id';
import { cancelQueuedRun, type CancelResult } from './cancel-queued';
import { enqueueRun } from './enqueue';
import { RunInputError, UnknownFlowError, beginRun } from './run-flow';

type Env = Record<string, string | undefined>;

export type RunModeKind = 'in-process' | 'queue';

/** The run mode the environment names, for a command that opens no session: `queue` when AQVEN_DATABASE_URL is a postgres:// URL. */
export function runModeKind(env: Env = process.env): RunModeKind {
  return sharedDatabaseUrl(env) === null ? 'in-process' : 'queue';
}

/** What a mode needs of the session to start a run: the project as it is now, and where its calls go. */
export interface RunSource {
  project: Project;
  providers: Record<string, ResolvedProvider>;
  env: Env;
  snapshotId: number | null;
  projectHash: string;
}

export interface StartRequest {
  flow: string;
  input: unknown;
  /** who starts the run: a user's name, `token:<name>`, `cli:<login>`; null while the dashboard is open */
  startedBy: string | null;
  /** the caller's span the run continues (a W3C traceparent; DESIGN: Observability, "Traces"): kept with a queued run */
  traceparent?: string | null;
}

/**
 * A run started — its row (and, queued, its job) committed, so the id can be answered — or why it
 * could not be recorded (no provider was called). An unknown flow or an input its schema refuses
 * is thrown (UnknownFlowError, RunInputError), as the caller's mistake.
 */
export type StartResult = { ok: true; id: string } | { ok: false; error: string };

/** A cancel: a queued run cancelled, or why not (its status; null: no such run); in-process mode queues nothing. */
export type CancelRunResult = CancelResult | { cancelled: false; status: null; inProcess: true };

/** the refusal of a cancel in in-process mode, in every door's words */
export const NOTHING_QUEUED = 'nothing is queued in SQLite mode: a run runs in the process that starts it';

interface ModeCommon {
  /** starts a run in the background (the dashboard, the API, `aqven run --queue`) */
  start(source: RunSource, req: StartRequest): Promise<StartResult>;
  cancel(runId: string, now?: number): Promise<CancelRunResult>;
  /** a long-lived process's duty for the runs of dead processes, started; returns its stop */
  background(): () => void;
}

export type RunMode = ({ kind: 'in-process'; canQueue: false } | { kind: 'queue'; canQueue: true; db: PgDb }) & ModeCommon;

/** the mode of a shared (PostgreSQL) database: runs are queued for workers */
export type QueueMode = Extract<RunMode, { kind: 'queue' }>;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const callersMistake = (err: unknown) => err instanceof UnknownFlowError || err instanceof RunInputError;

/** The run mode of a session over `db`: queue on PostgreSQL, in-process on SQLite. */
export function runModeFor(db: Db, log: (line: string) => void = (line) => console.error(line)): RunMode {
  const pg = queueDatabase(db);
  return pg ? queueMode(pg) : inProcessMode(db, log);
}

/**
 * The queue of the database the environment names, for a command that opens no session (`aqven
 * cancel`): its mode over the database opened for the command, and the close; null in SQLite mode,
 * where nothing is queued (NOTHING_QUEUED). The mode is decided here, once.
 */
export async function openQueueMode(env: Env = process.env): Promise<{ mode: QueueMode; close(): Promise<void> } | null> {
  const opened = await openSharedForCommand(env);
  return opened && { mode: queueMode(opened.db), close: opened.close };
}

function inProcessMode(db: Db, log: (line: string) => void): RunMode {
  return {
    kind: 'in-process',
    canQueue: false,
    async start(source, req) {
      const id = newRecordId();
      try {
        const { done } = await beginRun({ ...source, ...req, db, runId: id });
        void done.catch((err) => log(`aqven: run ${id} stopped: ${message(err)}`));
      } catch (err) {
        if (err instanceof StorageError) return { ok: false, error: err.message };
        throw err;
      }
      return { ok: true, id };
    },
    cancel: async () => ({ cancelled: false, status: null, inProcess: true }),
    background() {
      // a dead run is marked interrupted within LEASE_TTL_MS + LEASE_SWEEP_MS, even with nobody looking
      const timer = setInterval(() => {
        sweepExpiredRuns(db).catch((err: unknown) => log(`aqven: the sweep of dead runs failed: ${message(err)}`));
      }, LEASE_SWEEP_MS);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

function queueMode(db: PgDb): QueueMode {
  return {
    kind: 'queue',
    canQueue: true,
    db,
    async start(source, req) {
      try {
        const { project, snapshotId, projectHash } = source;
        return { ok: true, id: await enqueueRun({ db, project, snapshotId, projectHash, ...req }) };
      } catch (err) {
        if (callersMistake(err)) throw err;
        return { ok: false, error: `the run could not be queued: ${message(err)}` };
      }
    },
    cancel: (runId, now) => cancelQueuedRun(db, runId, now),
    // a worker takes a dead run over and resumes it: marking it interrupted here would race that
    background: () => () => {},
  };
}
