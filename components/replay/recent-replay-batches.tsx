// "Recent replay batches" under the failure groups of /failures (DESIGN: The dashboard, "Replay with
// the current policy"): each bulk replay any dashboard process ran, newest first — the group, who
// started it and when, how many now succeed, the spend against its cap, why it stopped, and a link
// to the replays it started in the run list. Its styles are app/styles/replay-batches.css (the page imports them).
import Link from 'next/link';
import { fmtCost } from '@/components/ui/format';
import { fmtAgo } from '@/lib/dashboard/failure-groups';
import type { BatchSummary } from '@/lib/flow/replay-batch-store';

const STATE = { running: ['running', 'running'], finished: ['succeeded', 'finished'], lost: ['interrupted', 'stopped'] } as const;

/** the run list's replays started while the batch ran (the list filters on a run's start) */
const replaysHref = (b: BatchSummary) => `/runs?kind=replay&from=${b.startedAt}&to=${b.lastAt + 1000}`;

/** `groups`: a readable name per failure signature shown on the page (agent · code); others show the signature */
export function RecentReplayBatches({ batches, groups, now }: { batches: BatchSummary[]; groups: Record<string, string>; now: number }) {
  if (batches.length === 0) return null;
  return (
    <section className="replay-recent" aria-labelledby="replay-recent-h" data-testid="replay-batches">
      <h2 id="replay-recent-h">Recent replay batches</h2>
      <ul className="replay-recent-list panel">
        {batches.map((b) => {
          const [tone, word] = b.state === 'finished' && b.stopped ? STATE.lost : STATE[b.state];
          return (
            <li key={b.id} data-testid="replay-batch-row" data-batch={b.id} data-state={b.state}>
              <div className="replay-recent-head">
                <span className={`status status-${tone}`}>
                  {b.state === 'running' ? <span className="pulse" aria-hidden /> : null}
                  {word}
                </span>
                <span className={groups[b.label] ? 'replay-recent-label' : 'replay-recent-label mono'} title={b.label}>
                  {groups[b.label] ?? b.label}
                </span>
              </div>
              <div className="replay-recent-facts small">
                <strong data-testid="replay-batch-result">{b.state === 'running' ? `${b.finished} of ${b.total} done` : `${b.succeeded} of ${b.total} now succeed`}</strong>
                <span>
                  spent <span className="mono">{fmtCost(b.spentUsd)}</span>
                  {b.capUsd !== null ? (
                    <>
                      {' '}
                      of <span className="mono">{fmtCost(b.capUsd)}</span>
                    </>
                  ) : null}
                </span>
                <span className="muted">
                  {b.startedBy ? `by ${b.startedBy}, ` : ''}
                  <span title={new Date(b.startedAt).toISOString()}>{fmtAgo(b.startedAt, now)}</span>
                </span>
                <Link href={replaysHref(b)}>its replays →</Link>
              </div>
              {b.stopped ? <div className="muted small replay-reason">Stopped: {b.stopped}</div> : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
