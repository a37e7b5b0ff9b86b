// The one function each process calls to have alerts (docs/monitoring.md, "Alerts"): `aqven run`
// for its run, `aqven worker` and the dashboard's server (`aqven serve`) for every run they run and
// for the periodic rules. It registers a run observer (lib/flow/run-observers.ts) that hands every
// finished flow run with a failed node to the alerting, and, given where to look, checks the pause
// and queue rules every CHECK_EVERY_MS. A run's own project (its `alerts:`) and database decide
// for it; the periodic check reads the process's project as it is now.
import type { Db } from '@/db/types';
import { systemClock } from '@/lib/engine/clock';
import { addRunObserver, type RunObserver } from '@/lib/flow/run-observers';
import type { Project } from '@/lib/project';
import { Alerting, type AlertDeps } from './alerting';

/** how often the periodic rules (model_paused, queue_wait) look */
export const CHECK_EVERY_MS = 15_000;
/** the longest a process about to exit waits for alerts still being delivered */
export const ALERTS_STOP_GRACE_MS = 10_000;

/** Hands each finished flow run with a failed node to `alerting`, once its end is committed (run_end). */
export function alertObserver(alerting: Alerting): RunObserver {
  return {
    watch(run) {
      const rules = run.config.alerts?.rules;
      if (run.kind !== 'flow' || !run.db || !rules || (!rules.newFailure && !rules.failureShare)) return null;
      const { db, config } = run;
      return {
        event(e) {
          // a run stopped from outside (a signal, a drain) is no failure starting
          if (e.type !== 'run_end' || e.record.status === 'interrupted' || !e.record.nodes.some((n) => n.status === 'failed')) return;
          alerting.track(`the failures of run ${run.runId} could not be evaluated`, alerting.afterRun(db, config, { runId: run.runId, flow: run.flow }));
        },
      };
    },
  };
}

export interface StartAlertsOptions extends Partial<AlertDeps> {
  /** where the periodic rules look, asked at each check: the process's database and its project as it is now; absent: no periodic check */
  periodic?: () => Promise<{ db: Db; project: Project } | null>;
  everyMs?: number;
}

export interface RunningAlerts {
  alerting: Alerting;
  /** one periodic check now (the timer's too) */
  checkNow(): Promise<void>;
  /** no more runs are watched and no check starts; waits for the deliveries under way, at most `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

export function startAlerts(o: StartAlertsOptions = {}): RunningAlerts {
  const alerting = new Alerting({ clock: o.clock ?? systemClock, env: o.env ?? process.env, fetch: o.fetch, onWarning: o.onWarning });
  const remove = addRunObserver(alertObserver(alerting));
  let checking: Promise<void> | null = null;
  const checkNow = (): Promise<void> => {
    const where = o.periodic;
    if (!where) return Promise.resolve();
    // one check at a time: a slow delivery never piles checks up
    checking ??= (async () => {
      const s = await where();
      if (s?.project.alerts) await alerting.check(s.db, s.project);
    })()
      .catch((err: unknown) => o.onWarning?.(`alerts: the periodic check failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => (checking = null));
    return checking;
  };
  const timer = o.periodic ? setInterval(() => alerting.track('the periodic check', checkNow()), o.everyMs ?? CHECK_EVERY_MS) : null;
  timer?.unref();
  return {
    alerting,
    checkNow,
    stop: async (graceMs = ALERTS_STOP_GRACE_MS) => {
      if (timer) clearInterval(timer);
      remove();
      await alerting.settle(graceMs);
    },
  };
}
