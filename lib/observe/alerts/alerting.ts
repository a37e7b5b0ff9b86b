// The alerts of one process (docs/monitoring.md, "Alerts"): the four rules evaluated over the
// committed history, each alert fired once per cool-down across every process of the database (the
// `alerts` row's upsert decides, db/alert-queries.ts), delivered in the background with retries
// (webhook.ts) and recorded. Nothing here is awaited by a run: a finished run's failures are
// evaluated after its `run_end` (its end is committed by then, so its failed nodes are grouped),
// the pause and queue rules by a periodic check (start-alerts.ts). Time is injected (`clock`).
import { agentNodeOutcomes, alertRow, claimAlert, failedNodesOfRun, noteDelivery } from '@/db/alert-queries';
import { signatureOrigins } from '@/db/failure-queries';
import { activePauses } from '@/db/pause-queries';
import { queryErrorText } from '@/db/pg';
import { oldestQueuedRun } from '@/db/status-queries';
import type { Db } from '@/db/types';
import type { Clock } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import { readWebhookUrl } from '@/lib/project/alerts-schema';
import { alertSummary, failureShareAlert, modelPausedAlert, newFailureAlert, queueWaitAlert, type Alert } from './alert';
import { alertBody } from './alert-body';
import { sendWebhook, type Delivery } from './webhook';

type Env = Record<string, string | undefined>;

/** an agent's failure share is counted at most this often per process (each failing run would otherwise count it again) */
export const SHARE_EVERY_MS = 5_000;
/** after losing a key to another process, this process asks again no sooner than its row's cool-down end, or this long without one */
const LOST_RECHECK_MS = 60_000;

export interface AlertDeps {
  clock: Pick<Clock, 'now' | 'sleep' | 'random'>;
  /** the process's environment: the webhook's variable, AQVEN_PUBLIC_URL */
  env: Env;
  fetch?: typeof fetch;
  /** a delivery that failed, a rule that could not be evaluated: one line each */
  onWarning?: (line: string) => void;
}

/** An alert this process fired, and how its delivery went. */
export interface Fired {
  alert: Alert;
  firedAt: number;
  delivery: Delivery;
}

/** The dashboard's public URL for the alerts' links (AQVEN_PUBLIC_URL; `aqven serve --public-url` sets it); null when unset or not http(s). */
export function publicUrlOf(env: Env): string | null {
  const raw = env.AQVEN_PUBLIC_URL?.trim();
  if (!raw) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? `${url.origin}${url.pathname.replace(/\/+$/, '')}` : null;
  } catch {
    return null;
  }
}

const unique = <T>(xs: T[]) => [...new Set(xs)];

export class Alerting {
  private readonly pending = new Set<Promise<unknown>>();
  /** per database and key: no claim before this time (fired here, or learned another process fired it) */
  private readonly cooling = new Map<string, number>();
  /** per database and agent: when its failure share was last counted */
  private readonly shareCounted = new Map<string, number>();
  /** per database and model: since when the checks have seen it paused without a break */
  private readonly pausedSince = new Map<string, number>();

  constructor(private readonly deps: AlertDeps) {}

  private warn(line: string): void {
    this.deps.onWarning?.(`alerts: ${line}`);
  }

  private cool(db: Db, key: string): boolean {
    return (this.cooling.get(`${db.name}\u0000${key}`) ?? -Infinity) > this.deps.clock.now();
  }

  /** Runs `work` in the background until it settles (settle() waits for it); a failure is one warning line. */
  track(what: string, work: Promise<unknown>): void {
    const p = work.catch((err: unknown) => this.warn(`${what}: ${queryErrorText(err)}`)).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Waits for the background work, at most `graceMs` (real time: a process about to exit). */
  async settle(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.pending]), late]);
    clearTimeout(timer);
  }

  /** Fires `alert` unless its key is cooling, and delivers it: the delivery once done; null when it did not fire. */
  async fire(db: Db, project: Project, alert: Alert): Promise<Fired | null> {
    const cfg = project.alerts;
    if (!cfg || this.cool(db, alert.key)) return null;
    const now = this.deps.clock.now();
    const coolKey = `${db.name}\u0000${alert.key}`;
    const webhook = readWebhookUrl(this.deps.env, cfg.webhook.urlEnv);
    if (!webhook.ok) {
      // not claimed: a process that cannot send must not hold the key for one that can (a shared database)
      this.cooling.set(coolKey, now + cfg.cooldownMs);
      this.warn(`"${alert.title}" was not sent: ${webhook.problem} in this process`);
      return null;
    }
    const won = await claimAlert(
      db,
      { key: alert.key, rule: alert.rule, agent: alert.agent, model: alert.model, sig: alert.sig, summary: alertSummary(alert) },
      now,
      cfg.cooldownMs,
    );
    if (!won) {
      const row = await alertRow(db, alert.key);
      this.cooling.set(coolKey, row && row.coolUntil > now ? row.coolUntil : now + Math.min(cfg.cooldownMs, LOST_RECHECK_MS));
      return null;
    }
    this.cooling.set(coolKey, now + cfg.cooldownMs);
    return { alert, firedAt: now, delivery: await this.deliver(db, project, alert, webhook.url, now) };
  }

  /** Sends a fired alert and records each failed try and the outcome on its row. */
  private async deliver(db: Db, project: Project, alert: Alert, url: URL, firedAt: number): Promise<Delivery> {
    const cfg = project.alerts!;
    const body = alertBody(alert, cfg.webhook.format, { project: project.name, firedAt, publicUrl: publicUrlOf(this.deps.env) });
    const d = await sendWebhook(url, body, {
      clock: this.deps.clock,
      fetch: this.deps.fetch,
      onRetry: (failed) => noteDelivery(db, alert.key, firedAt, { status: 'fired', tries: failed.tries, lastError: failed.lastError, deliveredAt: null }),
    });
    await noteDelivery(db, alert.key, firedAt, { status: d.ok ? 'delivered' : 'failed', tries: d.tries, lastError: d.lastError, deliveredAt: d.ok ? this.deps.clock.now() : null });
    if (!d.ok) this.warn(`"${alert.title}" was not delivered after ${d.tries} ${d.tries === 1 ? 'try' : 'tries'}: ${d.lastError}`);
    return d;
  }

  /**
   * A finished run's failed nodes against new_failure (a signature first seen less than new_for ago)
   * and failure_share (the agent's nodes over the window); read from the database, where the run's
   * end — and with it each failed node, its signature and its group's daily row — is committed.
   */
  async afterRun(db: Db, project: Project, run: { runId: string; flow: string }): Promise<Fired[]> {
    const rules = project.alerts?.rules;
    if (!rules) return [];
    const failed = await failedNodesOfRun(db, run.runId);
    if (failed.length === 0) return [];
    const now = this.deps.clock.now();
    const firing: Promise<Fired | null>[] = [];
    if (rules.newFailure) {
      const { newForMs } = rules.newFailure;
      const fresh = failed.filter((f, i) => failed.findIndex((g) => g.sig === f.sig) === i && !this.cool(db, `new_failure:${f.sig}`));
      const origins = await signatureOrigins(
        db,
        fresh.map((f) => f.sig),
      );
      for (const f of fresh) {
        const origin = origins.get(f.sig);
        if (origin && now - origin.firstAt < newForMs) firing.push(this.fire(db, project, newFailureAlert(origin, { ...run, nodeId: f.nodeId }, now)));
      }
    }
    if (rules.failureShare) {
      const rule = rules.failureShare;
      for (const agent of unique(failed.map((f) => f.agent))) {
        const counted = `${db.name}\u0000${agent}`;
        if (this.cool(db, `failure_share:${agent}`) || now - (this.shareCounted.get(counted) ?? -Infinity) < SHARE_EVERY_MS) continue;
        this.shareCounted.set(counted, now);
        const o = await agentNodeOutcomes(db, agent, now - rule.windowMs);
        if (o.finished >= rule.minNodes && o.failed / o.finished >= rule.threshold) firing.push(this.fire(db, project, failureShareAlert(agent, o, rule)));
      }
    }
    return (await Promise.all(firing)).filter((f): f is Fired => f !== null);
  }

  /** The periodic rules: a model paused longer than model_paused.longer_than, a queued run waiting longer than queue_wait.longer_than. */
  async check(db: Db, project: Project): Promise<Fired[]> {
    const rules = project.alerts?.rules;
    if (!rules) return [];
    const now = this.deps.clock.now();
    const firing: Promise<Fired | null>[] = [];
    if (rules.modelPaused) {
      const seen = new Set<string>();
      for (const p of await activePauses(db, now)) {
        const k = `${db.name}\u0000${p.model}`;
        seen.add(k);
        // first seen: since the 429 that set it (a pause renewed by a later 429 counts from the first the checks saw)
        const since = this.pausedSince.get(k) ?? Math.min(p.origin?.setAt ?? now, now);
        this.pausedSince.set(k, since);
        if (now - since >= rules.modelPaused.longerThanMs) firing.push(this.fire(db, project, modelPausedAlert(p.model, since, p.pausedUntil, now)));
      }
      for (const k of this.pausedSince.keys()) if (k.startsWith(`${db.name}\u0000`) && !seen.has(k)) this.pausedSince.delete(k);
    }
    if (rules.queueWait) {
      const oldest = await oldestQueuedRun(db);
      if (oldest && now - oldest.queuedAt >= rules.queueWait.longerThanMs) firing.push(this.fire(db, project, queueWaitAlert(oldest, now)));
    }
    return (await Promise.all(firing)).filter((f): f is Fired => f !== null);
  }
}
