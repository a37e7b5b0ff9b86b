'use client';
// The run history table (DESIGN: "The dashboard"): one row per run, newest first; the first page
// shows new runs as they start, every page keeps its running rows live. A run that succeeded by
// routing around a failed node is marked, and so is a replay (with its original). On a phone each
// row is a card: status and run first, then when, how long, the spend and the error.
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import type { RunListItem, RunListResponse } from '@/lib/dashboard/api-types';
import { fmtCost, fmtMs, fmtTokens, shortId } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import { isLiveRun, RUN_STATUS_NOTES } from '@/lib/dashboard/run-status';
import { useRunList } from './use-runs';
import '@/app/styles/runs.css';
import { runHref } from '@/lib/dashboard/run-anchors';
import { PURGED_ORIGINAL_REPLAY } from '@/lib/dashboard/run-origin';

export function RunTable({ query, initial, renderedAt, firstPage = false }: { query: string; initial: RunListResponse; renderedAt: number; firstPage?: boolean }) {
  const router = useRouter();
  const { data, dataUpdatedAt, isError } = useRunList(query, initial, renderedAt, firstPage);
  const now = Math.max(dataUpdatedAt, renderedAt);
  const live = data.items.some((r) => isLiveRun(r.status));
  if (data.items.length === 0) {
    return (
      <p className="empty" data-testid="no-runs">
        No runs match. Start one from <Link href="/flows">Flows</Link>.
      </p>
    );
  }
  return (
    <>
      <div className="table-meta muted">
        {live ? <span className="live">live</span> : null}
        {isError ? <span className="error-text"> could not refresh; showing the last data</span> : null}
      </div>
      <div className="table-scroll">
        <table className="grid runs">
          <thead>
            <tr>
              <th>Status</th>
              <th>Run</th>
              <th>Started</th>
              <th className="num">Duration</th>
              <th className="num">Attempts</th>
              <th className="num">Tokens in / out</th>
              <th className="num">Cost</th>
              <th>Error</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((r) => {
              const href = runHref(r.id);
              return (
                <tr
                  key={r.id}
                  data-testid="run-row"
                  data-status={r.status}
                  data-run={r.id}
                  data-kind={r.kind}
                  data-routed-around={r.routedAround ? '' : undefined}
                  className="clickable"
                  onClick={(e) => {
                    if ((e.target as HTMLElement).closest('a')) return;
                    router.push(href);
                  }}
                >
                  <td className="c-status">
                    <StatusBadge status={r.status} title={RUN_STATUS_NOTES[r.status]} />
                  </td>
                  <td className="c-run">
                    <Link href={href} className="run-link">
                      <strong>{r.flow}</strong> <span className="mono muted">{shortId(r.id)}</span>
                    </Link>
                    <RunMarks run={r} />
                  </td>
                  <td className="c-started">
                    <LocalTime ms={r.startedAt} withDate />
                  </td>
                  <td className="num c-duration">
                    {/* a queued run has not started: the time it has waited so far */}
                    {r.status === 'queued' ? <span className="muted">waiting {fmtMs(now - r.startedAt)}</span> : fmtMs((r.finishedAt ?? now) - r.startedAt)}
                  </td>
                  <td className="num c-attempts">
                    {r.attempts}
                    <span className="narrow-only muted"> {r.attempts === 1 ? 'attempt' : 'attempts'}</span>
                  </td>
                  <td className="num mono c-tokens">
                    {fmtTokens(r.inputTokens)} / {fmtTokens(r.outputTokens)}
                  </td>
                  <td className="num mono c-cost">{fmtCost(r.costUsd)}</td>
                  <td className="c-error">
                    {r.errorCode ? (
                      <span className="mono error-text">
                        {r.errorCode}
                        {r.errorNode ? <span className="muted">@{r.errorNode}</span> : null}
                      </span>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** What sets a run apart from an ordinary flow run: routed around a failure, a replay, a probe. */
function RunMarks({ run: r }: { run: RunListItem }) {
  if (!r.routedAround && r.kind === 'flow') return null;
  return (
    <span className="run-marks">
      {r.routedAround ? (
        <span className="badge mark-routed" data-testid="routed-around" title="the run succeeded, but a node of it failed: its on_fail route went around it">
          routed around a failure
        </span>
      ) : null}
      {r.kind === 'replay' ? (
        <span className="badge mark-replay" data-testid="replay-of" title={r.replayNode ? `node ${r.replayNode} run again under today's files` : undefined}>
          {r.replayOf ? (
            <>
              replay of{' '}
              <Link href={runHref(r.replayOf)} className="mono">
                {shortId(r.replayOf)}
              </Link>
            </>
          ) : (
            PURGED_ORIGINAL_REPLAY
          )}
        </span>
      ) : null}
      {r.kind === 'limits' ? <span className="badge">limits probe</span> : null}
    </span>
  );
}
