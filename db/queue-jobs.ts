// graphile-worker's side of a queued run (DESIGN: Storage, "Workers and the queue"): its schema, and
// the two of its SQL functions we call inside our own transactions — add_job when a run is
// enqueued, remove_job when it is cancelled — so a run row never exists without its job, nor a job
// without its row. The job only carries the run id: the run row is the truth, and a worker's claim
// of the row (claim.ts), not the job's lock, says who runs it.
import { and, asc, eq, lt, sql, type SQL } from 'drizzle-orm';
import { Logger, runMigrations, type LogLevel } from 'graphile-worker';
import { LEASE_TTL_MS } from './run-lease';
import { queueSchemaName } from './status-queries';
import type { Orm, PgDb } from './types';

/** the task name of a run's job */
export const RUN_TASK = 'aqven_run';
/** how often graphile-worker re-delivers a job whose task threw (a storage failure before the claim) */
export const JOB_MAX_ATTEMPTS = 25;

/** A job's payload: the run it stands for. */
export interface RunJob {
  runId: string;
}

/** The run id in a job's payload, or null when the payload is not ours. */
export function runIdOf(payload: unknown): string | null {
  const id = (payload as Partial<RunJob> | null)?.runId;
  return typeof id === 'string' && id.length > 0 ? id : null;
}

/** graphile-worker's log lines: its warnings and errors told to `say`; info and debug are dropped. */
export function queueLoggerTo(say: (level: 'error' | 'warning', message: string) => void): Logger {
  return new Logger(() => (level: LogLevel, message: string) => {
    if (level === 'error' || level === 'warning') say(level, message);
  });
}

/** graphile-worker's warnings and errors on stderr, prefixed (a worker logs them as its own lines instead: lib/cli/queue.ts). */
export const queueLogger = queueLoggerTo((level, message) => process.stderr.write(`aqven worker: graphile-worker ${level}: ${message}\n`));

const installed = new Map<string, Promise<void>>();

/** Installs or updates graphile-worker's schema in `db`, once per process (its own migrations take a lock). */
export function ensureQueueSchema(db: PgDb): Promise<void> {
  let done = installed.get(db.url);
  if (!done) {
    // a short-lived pool of its own: graphile-worker would wrap the database's pool in its own error handlers
    done = runMigrations({ connectionString: db.url, maxPoolSize: 2, logger: queueLogger });
    installed.set(db.url, done);
    done.catch(() => installed.delete(db.url));
  }
  return done;
}

/** drizzle's node-postgres transaction runs SQL text with `execute` (our `Orm` type is SQLite's builder). */
function execute<R = unknown>(q: Orm, query: SQL): Promise<{ rows: R[] }> {
  return (q as unknown as { execute(s: SQL): Promise<{ rows: R[] }> }).execute(query);
}

/** a function or table of graphile-worker's schema */
const own = (name: string) => sql`${sql.identifier(queueSchemaName())}.${sql.identifier(name)}`;
const fn = own;

/** Adds the run's job in the transaction `q`: keyed by the run id, so adding it twice keeps one job. */
export async function addRunJob(q: Orm, runId: string): Promise<void> {
  await execute(
    q,
    sql`select ${fn('add_job')}(${RUN_TASK}::text, json_build_object('runId', ${runId}::text), job_key := ${runId}::text, max_attempts := ${JOB_MAX_ATTEMPTS}::int)`,
  );
}

/**
 * Removes the run's job in the transaction `q`. A job a worker holds at that moment is not
 * deleted by graphile-worker but loses its key and its retries; that worker's claim finds the run
 * cancelled and lets it go.
 */
export async function removeRunJob(q: Orm, runId: string): Promise<void> {
  await execute(q, sql`select ${fn('remove_job')}(${runId}::text)`);
}

/** how long a queued run's job may stay locked (or out of retries) before a worker gives the run a new job */
export const STUCK_JOB_MS = LEASE_TTL_MS;

/**
 * Queued runs whose job no live worker will run — locked for longer than STUCK_JOB_MS (the worker
 * that took it died between taking the job and claiming the run; graphile-worker itself unlocks
 * such a job only after 4 hours), out of retries, or gone — get a new job. graphile-worker's
 * add_job does exactly that for a locked key: it takes the key off the locked job and adds a fresh
 * one, while a job still waiting keeps its place (`preserve_run_at`). A worker that was only slow
 * meets the run claimed by another and lets it go (a duplicate delivery). Resolves with the run ids.
 */
export async function redeliverStuckRuns(db: PgDb, now = Date.now(), limit = 200): Promise<string[]> {
  const { runs: r } = db.t;
  const queued = await db.q
    .select({ id: r.id })
    .from(r)
    .where(and(eq(r.status, 'queued'), lt(r.queuedAt, now - STUCK_JOB_MS)))
    .orderBy(asc(r.queuedAt))
    .limit(limit);
  if (queued.length === 0) return [];
  const ids = queued.map((x) => x.id);
  const { rows } = await execute<{ key: string }>(
    db.q,
    sql`select key from ${own('_private_jobs')} where key in ${ids}
        and ((locked_at is null and attempts < max_attempts) or locked_at > now() - make_interval(secs => ${STUCK_JOB_MS / 1000}))`,
  );
  const healthy = new Set(rows.map((x) => x.key));
  const stuck = ids.filter((id) => !healthy.has(id));
  for (const id of stuck) {
    await execute(
      db.q,
      sql`select ${fn('add_job')}(${RUN_TASK}::text, json_build_object('runId', ${id}::text), job_key := ${id}::text, max_attempts := ${JOB_MAX_ATTEMPTS}::int, job_key_mode := 'preserve_run_at')`,
    );
  }
  return stuck;
}
