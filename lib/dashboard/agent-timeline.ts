// The charts of /agents/[name] from the daily sums (db/agent-timeline.ts): one point per UTC day of
// the window — attempts by outcome (an ok answer that failed its checks counted as invalid, as on
// the run page) and the spend on dropped attempts, by the run header's own rule (isDropped) — and
// the policy saves to mark on the same days. Pure: the page computes it on the server.
import type { AgentTimeline } from '@/db/agent-timeline';
import { DAY_MS } from '@/db/run-aggregates';
import { isDropped, outcomeKey, type AttemptFacts } from './run-view';

export const TIMELINE_OUTCOMES = ['ok', 'invalid', 'error', 'refusal', 'truncated'] as const;
export type TimelineOutcome = (typeof TIMELINE_OUTCOMES)[number];

export interface TimelineDay {
  /** start of the UTC day, ms */
  day: number;
  /** attempts with an outcome on this day */
  attempts: number;
  counts: Record<TimelineOutcome, number>;
  /** what the attempts whose answer was not kept cost (retried, repaired, fell back, or failed the node) */
  droppedCostUsd: number;
  droppedAttempts: number;
  costUsd: number;
}

export interface TimelineMark {
  /** the UTC day the save falls on (the charts' x axis) */
  day: number;
  revisions: { revision: number; createdAt: number; author: string | null }[];
}

export interface TimelineView {
  days: TimelineDay[];
  /** policy saves, grouped by the day they fall on */
  marks: TimelineMark[];
  totals: Omit<TimelineDay, 'day'>;
}

const zero = (): Record<TimelineOutcome, number> => ({ ok: 0, invalid: 0, error: 0, refusal: 0, truncated: 0 });

/**
 * In the daily sums an attempt's cause is '' when it had none and its action 'none' when the
 * policy did nothing: a finished attempt was discarded exactly when it had a cause (its answer
 * was not the node's), which is what the run page's `discarded` says.
 */
function dropped(cause: string, action: string): boolean {
  return isDropped({ discarded: cause !== '', action: action as AttemptFacts['action'] });
}

export function timelineView(t: AgentTimeline): TimelineView {
  const byDay = new Map<number, TimelineDay>();
  for (let day = t.from; day < t.to; day += DAY_MS) byDay.set(day, { day, attempts: 0, counts: zero(), droppedCostUsd: 0, droppedAttempts: 0, costUsd: 0 });
  const totals: Omit<TimelineDay, 'day'> = { attempts: 0, counts: zero(), droppedCostUsd: 0, droppedAttempts: 0, costUsd: 0 };
  for (const r of t.rows) {
    const d = byDay.get(r.day);
    if (!d) continue;
    const key = outcomeKey({ outcome: r.outcome as AttemptFacts['outcome'], cause: (r.cause || null) as AttemptFacts['cause'] });
    const drop = dropped(r.cause, r.action);
    for (const s of [d, totals]) {
      if (key !== 'pending') s.counts[key] += r.attempts;
      s.attempts += r.attempts;
      s.costUsd += r.costUsd;
      if (drop) {
        s.droppedAttempts += r.attempts;
        s.droppedCostUsd += r.costUsd;
      }
    }
  }
  const marks = new Map<number, TimelineMark>();
  for (const r of t.revisions) {
    const day = Math.floor(r.createdAt / DAY_MS) * DAY_MS;
    if (!byDay.has(day)) continue;
    const m = marks.get(day) ?? { day, revisions: [] };
    m.revisions.push(r);
    marks.set(day, m);
  }
  return { days: [...byDay.values()], marks: [...marks.values()], totals };
}

/** A UTC day as "Nov 12" (the same text on the server and in every browser). */
export function dayLabel(day: number): string {
  return new Date(day).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** The revisions a marker stands for, short enough to sit above a bar: "r3", "r3, r4", "r3–r9". */
export function markLabel(m: TimelineMark): string {
  const rs = m.revisions.map((r) => r.revision);
  if (rs.length <= 2) return rs.map((r) => `r${r}`).join(', ');
  return `r${Math.min(...rs)}–r${Math.max(...rs)}`;
}
