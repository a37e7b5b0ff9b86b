// The dashboard server's one session over its project (cached across requests and hot reloads),
// and the runs it starts: in the background in SQLite mode, as jobs for `aqven worker` in
// PostgreSQL mode (DESIGN: Storage, "Workers and the queue"). SQLite mode: runs of dead processes
// are swept (DESIGN: Storage, leases) before every read through serverSession() (at most every
// READ_SWEEP_MS) and every LEASE_SWEEP_MS in the background; on PostgreSQL the workers take dead
// runs over instead. SIGINT/SIGTERM interrupt this process's runs and record them. Each run starts
// under the project as it is then (refreshSession: the folder's files, or the newest snapshot): no
// run uses a policy that another dashboard process or a hand edit has replaced (DESIGN: Storage,
// "The project folder in a long-lived process"). The usage of answers cut off mid-body is looked up
// from the provider in the background.
import 'server-only';
import { closeDatabase, sweepBeforeRead } from '@/db/client';
import { interruptAll, interruptAllNow } from '@/lib/flow/active-runs';
import { RunInputError, UnknownFlowError, validateRunInput } from '@/lib/flow/run-flow';
import type { CancelRunResult } from '@/lib/flow/run-mode';
import { openSession, ProjectInvalidError, refreshSession, type Session } from '@/lib/flow/session';
import { startUsageLookups } from '@/lib/flow/usage-lookup';
import { startAlerts, type RunningAlerts } from '@/lib/observe/alerts/start-alerts';
import { own } from '@/lib/shared/own';
import { dashboardContext } from './context';

const g = globalThis as {
  __aqvenSession?: Promise<Session>;
  __aqvenBackground?: () => void;
  __aqvenSignals?: () => void;
  __aqvenLookups?: () => void;
  __aqvenAlerts?: RunningAlerts;
};

/** The run mode's background duty (lib/flow/run-mode.ts): SQLite sweeps the runs of dead processes; on PostgreSQL the workers take them over. */
function startBackground(s: Session): void {
  g.__aqvenBackground?.();
  g.__aqvenBackground = s.mode.background();
}

/**
 * The usage of cut-off answers, looked up in the background every few seconds (DESIGN: Usage
 * unknown, never zero) — from the session's providers as they are now, so a simulated dashboard
 * asks its own simulator.
 */
function startLookups(s: Session): void {
  g.__aqvenLookups?.();
  g.__aqvenLookups = startUsageLookups(s.db, () => ({ providers: s.providers, env: s.env, simulated: s.simulated !== null }));
}

/**
 * aqven.yaml's alerts (docs/monitoring.md, "Alerts") for the runs this server runs, and the periodic
 * pause and queue rules over the project as it is now (refreshSession; a folder that now fails check
 * keeps the project it had).
 */
function startDashboardAlerts(s: Session): void {
  void g.__aqvenAlerts?.stop(0);
  g.__aqvenAlerts = startAlerts({
    periodic: async () => {
      await refreshSession(s).catch(() => false);
      return { db: s.db, project: s.project };
    },
    onWarning: (line) => console.error(`aqven serve: ${line}`),
  });
}

/**
 * SIGINT/SIGTERM: this process's runs are interrupted (attempts aborted, each recorded as
 * interrupted); Next.js's own handler closes the server meanwhile. Whatever has not settled when
 * the process exits is recorded synchronously at 'exit'. When no other handler is installed
 * (NEXT_MANUAL_SIG_HANDLE), the process exits once the runs are recorded.
 */
function handleStopSignals(): void {
  if (g.__aqvenSignals) return;
  const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
    void interruptAll(`stopped by ${sig}`).finally(() => {
      if (process.listenerCount(sig) === 1) process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  };
  const onExit = () => interruptAllNow('stopped: the dashboard server exited');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  g.__aqvenSignals = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  };
}

function session(): Promise<Session> {
  if (!g.__aqvenSession) {
    const ctx = dashboardContext();
    g.__aqvenSession = openSession(ctx.projectDir, { simulate: ctx.simulate });
    g.__aqvenSession.then(
      (s) => {
        startBackground(s);
        startLookups(s);
        startDashboardAlerts(s);
        handleStopSignals();
      },
      () => {
        g.__aqvenSession = undefined; // a broken project can be fixed without a restart
      },
    );
  }
  return g.__aqvenSession;
}

/**
 * Ends the session of a process that serves one project after another — the integration tests'
 * shared process (test/helpers/shared-process-setup.ts): its background duties, alerts and
 * stop-signal handlers stopped, its simulator and database closed, and forgotten, so the next serverSession()
 * opens what AQVEN_PROJECT and AQVEN_DATABASE_URL name then. The runs it started are the caller's
 * to end first (interruptAll).
 */
export async function closeServerSessionForTests(): Promise<void> {
  const opening = g.__aqvenSession;
  g.__aqvenSession = undefined;
  const s = await opening?.catch(() => null);
  if (!s) return;
  g.__aqvenBackground?.();
  g.__aqvenBackground = undefined;
  g.__aqvenLookups?.();
  g.__aqvenLookups = undefined;
  g.__aqvenSignals?.();
  g.__aqvenSignals = undefined;
  await g.__aqvenAlerts?.stop(0);
  g.__aqvenAlerts = undefined;
  await s.close();
  await closeDatabase(s.db);
}

/** The session; a dead run is swept before it is read (at most every READ_SWEEP_MS). */
export async function serverSession(): Promise<Session> {
  const s = await session();
  sweepBeforeRead(s.db);
  return s;
}

export type StartRunResult = { ok: true; id: string } | { ok: false; status: 400 | 404 | 503; error: string; field?: string };

/**
 * The session with the project as it is now (refreshSession). SQLite mode: the folder's files
 * when they changed since the session loaded them (another dashboard's save, a hand edit); a
 * folder that now fails check is an error for the caller (400, naming the file) — never a run of
 * the files as they were. PostgreSQL mode: the newest snapshot; one failing check is refused and
 * the one the session runs stays (the workers keep it too).
 */
async function upToDate(s: Session): Promise<{ ok: true } | { ok: false; status: 400; error: string }> {
  try {
    await refreshSession(s);
  } catch (err) {
    if (!(err instanceof ProjectInvalidError)) throw err;
    if (s.snapshotId === null) return { ok: false, status: 400, error: err.message };
  }
  return { ok: true };
}

/**
 * Validates and starts a run; the id answers at once (GET /api/runs/:id, the run page). The run
 * runs the project as it is when it starts (upToDate) and records its hash and `startedBy` (a
 * user's name, `token:<name>`; null while the dashboard is open). SQLite mode: the run continues in
 * this process after the response is sent; its row is committed first, and a run that cannot be
 * recorded is refused (503) before any provider is called. PostgreSQL mode: the run and its job
 * are committed, queued for `aqven worker`, checked against the newest snapshot (the one the
 * workers run). Bad input is refused (400, naming the field), never queued. The caller's limits
 * (runs per minute, the spend budget) are checked before, by the door (callerLimits). `traceparent`:
 * the caller's span the run's trace continues (POST /api/runs's header), kept with a queued run.
 */
export async function startRun(flowName: string, input: unknown, startedBy: string | null = null, traceparent: string | null = null): Promise<StartRunResult> {
  const s = await serverSession();
  const fresh = await upToDate(s);
  if (!fresh.ok) return fresh;
  // one consistent view of the session for this run: a refresh for another request may swap it meanwhile
  const { project, providers, env, snapshotId, projectHash } = s;
  const flow = own(project.flows, flowName); // never a member of Object.prototype ("constructor")
  if (!flow) return { ok: false, status: 404, error: new UnknownFlowError(flowName, Object.keys(project.flows)).message };
  try {
    validateRunInput(flow, input);
  } catch (err) {
    if (err instanceof RunInputError) return { ok: false, status: 400, error: err.message, field: err.field };
    throw err;
  }
  const started = await s.mode.start({ project, providers, env, snapshotId, projectHash }, { flow: flowName, input, startedBy, traceparent });
  return started.ok ? started : { ok: false, status: 503, error: started.error };
}

/**
 * Cancels a queued run (PostgreSQL mode): its row `queued` → `cancelled` and its job removed, in
 * one transaction; a run a worker has started, or one already over, is left alone and its status
 * answered. SQLite mode queues nothing.
 */
export async function cancelRun(runId: string): Promise<CancelRunResult> {
  return (await serverSession()).mode.cancel(runId);
}
