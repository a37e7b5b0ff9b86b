'use client';
// The run history table (DESIGN: "The dashboard"): one row per run, newest first, live while any visible
// run is queued or running.
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import type { RunListResponse } from '@/lib/dashboard/api-types';
import { fmtCost, fmtMs, fmtTokens, shortId } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import { isLiveRun, RUN_STATUS_NOTES } from '@/lib/dashboard/run-status';
import { useRunList } from './use-runs';

export function RunTable({ query, initial, renderedAt }: { query: string; initial: RunListResponse; renderedAt: number }) {
  const router = useRouter();
  const { data, dataUpdatedAt, isError } = useRunList(query, initial, renderedAt);
  const now = Math.max(dataUpdatedAt, renderedAt);
  const live = data.items.some((r) => isLiveRun(r.status));
  if (data.items.length === 0) {
    return <p className="empty">No runs match. Start one from <Link href="/flows">Flows</Link>.</p>;
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
              const href = `/runs/${r.id}`;
              return (
                <tr
                  key={r.id}
                  data-testid="run-row"
                  data-status={r.status}
                  data-run={r.id}
                  className="clickable"
                  onClick={(e) => {
                    if ((e.target as HTMLElement).closest('a')) return;
                    router.push(href);
                  }}
                >
                  <td>
                    <StatusBadge status={r.status} title={RUN_STATUS_NOTES[r.status]} />
                  </td>
                  <td>
                    <Link href={href} className="run-link">
                      <strong>{r.flow}</strong> <span className="mono muted">{shortId(r.id)}</span>
                    </Link>
                  </td>
                  <td>
                    <LocalTime ms={r.startedAt} withDate />
                  </td>
                  <td className="num">
                    {/* a queued run has not started: the time it has waited so far */}
                    {r.status === 'queued' ? <span className="muted">waiting {fmtMs(now - r.startedAt)}</span> : fmtMs((r.finishedAt ?? now) - r.startedAt)}
                  </td>
                  <td className="num">{r.attempts}</td>
                  <td className="num mono">
                    {fmtTokens(r.inputTokens)} / {fmtTokens(r.outputTokens)}
                  </td>
                  <td className="num mono">{fmtCost(r.costUsd)}</td>
                  <td>
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
