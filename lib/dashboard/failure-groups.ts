// The /failures page's view rules (DESIGN: The dashboard, "Failure groups"): its windows, where an
// example links to, how a group's code is coloured, how long ago a failure was. Pure, so the page
// and its tests share them.
import type { GroupAlert } from '@/db/alert-queries';
import type { FailureGroup } from '@/db/failure-queries';
import { fmtAgo } from '@/lib/shared/span-text';
import { runHref } from './run-anchors';

const HOUR = 3_600_000;

/** The windows the page offers, in the order it lists them; the first is the default: the last day. */
export const FAILURE_WINDOWS = { '24h': 24 * HOUR, '7d': 7 * 24 * HOUR, '30d': 30 * 24 * HOUR } as const;
export type FailureWindow = keyof typeof FAILURE_WINDOWS;
export const DEFAULT_FAILURE_WINDOW: FailureWindow = '24h';

export const FAILURE_WINDOW_LABELS: Record<FailureWindow, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };

/** `?window=` as given, or the default for anything else (an old link, a typo). */
export function readFailureWindow(value: string | string[] | undefined): FailureWindow {
  const v = Array.isArray(value) ? value[0] : value;
  return v && Object.hasOwn(FAILURE_WINDOWS, v) ? (v as FailureWindow) : DEFAULT_FAILURE_WINDOW;
}

/** The run page's place of an example: the failed attempt of an attempt group, else the node. */
export function exampleHref(e: FailureGroup['examples'][number]): string {
  return runHref(e.runId, { node: e.nodeId, seq: e.attemptSeq });
}

/** The outcome colour of a cause or a node's error code (the timeline's colours); null: none fits. */
export function codeOutcome(code: string): 'error' | 'refusal' | 'truncated' | 'invalid' | null {
  switch (code) {
    case 'provider_error':
    case 'quota':
      return 'error';
    case 'refusal':
      return 'refusal';
    case 'truncated':
      return 'truncated';
    case 'invalid_output':
      return 'invalid';
    default:
      return null;
  }
}

/** "12 min ago" as the page says it (the server's render is `now`) */
export { fmtAgo };

/** A share as a percentage with the precision a small one needs: 0.4 %, 12 %, 100 %. */
export function fmtShare(share: number | null): string {
  if (share === null) return '—';
  const pct = share * 100;
  if (pct > 0 && pct < 0.1) return '<0.1 %';
  return `${pct < 10 ? pct.toFixed(1).replace(/\.0$/, '') : Math.round(pct)} %`;
}

/** A group's alert as the page marks it (aqven.yaml's `alerts:`, rule new_failure): what the mark says, its tooltip and state. */
export function alertMark(a: GroupAlert | undefined, now: number): { state: GroupAlert['status']; text: string; title: string } | null {
  if (!a) return null;
  const when = new Date(a.firedAt).toISOString();
  const times = a.timesFired === 1 ? 'once' : `${a.timesFired} times`;
  switch (a.status) {
    case 'delivered':
      return { state: a.status, text: `alerted ${fmtAgo(a.firedAt, now)}`, title: `the webhook took the alert fired at ${when} (fired ${times} in all)` };
    case 'failed':
      return {
        state: a.status,
        text: `alert not delivered ${fmtAgo(a.firedAt, now)}`,
        title: `the alert fired at ${when} was not taken by the webhook after ${a.tries} ${a.tries === 1 ? 'try' : 'tries'} (fired ${times} in all)`,
      };
    default:
      return {
        state: a.status,
        text: `alerting since ${fmtAgo(a.firedAt, now)}`,
        title: `the alert fired at ${when} is being delivered, or its process stopped before it could (fired ${times} in all)`,
      };
  }
}
