// One alert, made from the facts a rule found (docs/monitoring.md, "Alerts"): its key (one alert per
// key per cool-down), a title and a line a person reads, the details a program reads, and the
// dashboard page it links to. Pure: the rules, the webhook bodies and `aqven alerts test` share it.
// Free text is only ever stored failure text (redacted when it was recorded), normalised as its
// failure group shows it, and passed through the redactor again here.
import type { AlertRule } from '@/db/alert-queries';
import type { SignatureOrigin } from '@/db/failure-queries';
import { redact } from '@/lib/redact';
import { failureGroupPath } from '@/lib/shared/failure-group-link';
import { fmtAgo, fmtSpan } from '@/lib/shared/span-text';

export type AlertDetails = Record<string, string | number | null>;

export interface Alert {
  rule: AlertRule;
  key: string;
  /** "New failure in agent classifier" */
  title: string;
  /** what happened, one line */
  text: string;
  /** the dashboard page to open, e.g. /failures?agent=classifier#fg-…; joined to the public URL when it is known */
  path: string;
  agent: string | null;
  model: string | null;
  /** new_failure: the failure group's signature */
  sig: string | null;
  details: AlertDetails;
}

/** How an alert is stored (alerts.summary) and logged: its title and its line. */
export const alertSummary = (a: Alert): string => `${a.title}: ${a.text}`;

const iso = (ms: number) => new Date(ms).toISOString();
const pct = (share: number) => `${Math.round(share * 100)}%`;

/** a failure group's text as an alert may carry it: redacted again (it was when recorded), at most this long */
const MESSAGE_MAX = 300;
const safeText = (text: string) => {
  const r = redact(text);
  return r.length > MESSAGE_MAX ? `${r.slice(0, MESSAGE_MAX - 1)}…` : r;
};

/** A node failed with a signature first seen `now - origin.firstAt` ago (less than the rule's new_for). */
export function newFailureAlert(origin: SignatureOrigin, at: { runId: string; nodeId: string; flow: string }, now: number): Alert {
  const message = safeText(origin.message);
  const code = origin.code || 'no code';
  return {
    rule: 'new_failure',
    key: `new_failure:${origin.sig}`,
    title: `New failure in agent ${origin.agent}`,
    text: `${code}${message ? `: ${message}` : ''} (node ${at.nodeId} of flow ${at.flow}, first seen ${fmtAgo(origin.firstAt, now)})`,
    path: failureGroupPath(origin.agent, origin.sig),
    agent: origin.agent,
    model: origin.model || null,
    sig: origin.sig,
    details: {
      agent: origin.agent,
      sig: origin.sig,
      level: origin.level,
      code: origin.code,
      message,
      firstSeenAt: iso(origin.firstAt),
      runId: at.runId,
      nodeId: at.nodeId,
      flow: at.flow,
    },
  };
}

/** An agent's failed nodes over its finished nodes in the window reached the threshold. */
export function failureShareAlert(agent: string, o: { failed: number; finished: number }, rule: { threshold: number; windowMs: number }): Alert {
  const share = o.finished > 0 ? o.failed / o.finished : 0;
  return {
    rule: 'failure_share',
    key: `failure_share:${agent}`,
    title: `Agent ${agent} fails ${pct(share)} of its nodes`,
    text: `${o.failed} of ${o.finished} nodes failed in the last ${fmtSpan(rule.windowMs)} (threshold ${pct(rule.threshold)})`,
    path: failureGroupPath(agent),
    agent,
    model: null,
    sig: null,
    details: { agent, failed: o.failed, finished: o.finished, share: Math.round(share * 1000) / 1000, threshold: rule.threshold, windowMs: rule.windowMs },
  };
}

/** A model has been paused by rate limits, without a break the checks saw, since `since`. */
export function modelPausedAlert(model: string, since: number, pausedUntil: number, now: number): Alert {
  return {
    rule: 'model_paused',
    key: `model_paused:${model}`,
    title: `Model ${model} paused for ${fmtSpan(Math.max(0, now - since))}`,
    text: `rate-limited since ${iso(since)}; its calls wait until ${iso(pausedUntil)} at least`,
    path: '/providers',
    agent: null,
    model,
    sig: null,
    details: { model, pausedSinceAt: iso(since), pausedUntil: iso(pausedUntil), pausedMs: Math.max(0, now - since) },
  };
}

/** The oldest queued run has waited since `queuedAt` for a worker. */
export function queueWaitAlert(run: { id: string; queuedAt: number }, now: number): Alert {
  const waited = Math.max(0, now - run.queuedAt);
  return {
    rule: 'queue_wait',
    key: 'queue_wait',
    title: `A queued run has waited ${fmtSpan(waited)} for a worker`,
    text: `run ${run.id} was queued at ${iso(run.queuedAt)} and no worker has started it: are the workers running, and enough of them?`,
    path: '/runs?status=queued',
    agent: null,
    model: null,
    sig: null,
    details: { runId: run.id, queuedAt: iso(run.queuedAt), waitedMs: waited },
  };
}

/** What `aqven alerts test` sends: an alert of the shape the rules send, marked as a sample. */
export function sampleAlert(now: number): Alert {
  return {
    rule: 'new_failure',
    key: 'test',
    title: 'Test alert from AQVEN',
    text: `a sample sent by \`aqven alerts test\` at ${iso(now)}: alerts from this project reach this webhook`,
    path: '/failures',
    agent: null,
    model: null,
    sig: null,
    details: { sample: 'true' },
  };
}
