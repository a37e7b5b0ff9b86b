// The failure groups of /failures, largest first: what failed (agent, model, cause, the text with its
// particulars replaced), how often and how much of the agent's calls, the spend, when first and
// last seen, a week's trend, and the newest example runs to open.
import Link from 'next/link';
import type { GroupAlert } from '@/db/alert-queries';
import type { FailureGroup } from '@/db/failure-queries';
import { fmtCost, shortId, splitModel } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { alertMark, codeOutcome, exampleHref, fmtAgo, fmtShare } from '@/lib/dashboard/failure-groups';
import { failureGroupAnchor } from '@/lib/shared/failure-group-link';
import { ReplayGroupButton } from '@/components/replay/replay-group-button';
import { Sparkline } from './sparkline';

/** `replaySince`: the window's start, for an editor's "Replay group" button; null hides it. `alerts`: the groups that alerted, by signature */
export function FailureGroupList({
  groups,
  now,
  replaySince,
  alerts = {},
}: {
  groups: FailureGroup[];
  now: number;
  replaySince: number | null;
  alerts?: Record<string, GroupAlert>;
}) {
  return (
    <ol className="fg-list" aria-label="Failure groups">
      {groups.map((g, i) => (
        <FailureGroupRow key={g.sig} group={g} rank={i + 1} now={now} replaySince={replaySince} alert={Object.hasOwn(alerts, g.sig) ? alerts[g.sig] : undefined} />
      ))}
    </ol>
  );
}

function FailureGroupRow({ group: g, rank, now, replaySince, alert }: { group: FailureGroup; rank: number; now: number; replaySince: number | null; alert?: GroupAlert }) {
  const outcome = codeOutcome(g.code);
  const mark = alertMark(alert, now);
  const model = g.model ? splitModel(g.model) : null;
  const calls = g.level === 'attempt' ? 'of its attempts' : 'of its nodes';
  return (
    <li
      id={failureGroupAnchor(g.sig)}
      className="fg panel"
      data-testid="failure-group"
      data-sig={g.sig}
      data-level={g.level}
      data-agent={g.agent}
      aria-label={`failure group ${rank}: ${g.agent} ${g.code}`}
    >
      <div className="fg-count">
        <strong className="fg-n" data-testid="failure-count">
          {g.failures.toLocaleString('en-US')}
        </strong>
        <span className="muted small">{g.level === 'attempt' ? (g.failures === 1 ? 'failed attempt' : 'failed attempts') : g.failures === 1 ? 'failed node' : 'failed nodes'}</span>
        <span className="small" title={`failures ${calls} on the UTC days the window touches`} data-testid="failure-share">
          {fmtShare(g.share)} <span className="muted">{calls}</span>
        </span>
      </div>
      <div className="fg-what">
        <div className="fg-tags">
          <Link href={`/agents/${encodeURIComponent(g.agent)}`} className="fg-agent">
            {g.agent}
          </Link>
          {model ? (
            <span className="mono fg-model" title={g.model}>
              {model.provider ? <span className="muted">{model.provider}:</span> : null}
              {model.id}
            </span>
          ) : (
            <span className="muted small">node</span>
          )}
          <span className={`chip ${outcome ? `o-${outcome}` : ''}`}>{g.code || 'no code'}</span>
          {mark ? (
            <span className={`badge fg-alert fg-alert-${mark.state}`} title={mark.title} data-testid="failure-alert" data-state={mark.state}>
              {mark.text}
            </span>
          ) : null}
        </div>
        <p className="fg-message mono">{g.message || <span className="muted">(no message)</span>}</p>
        <div className="fg-examples">
          <span className="section-label">Newest</span>
          {g.examples.length === 0 ? <span className="muted small">no example in the window</span> : null}
          <ul>
            {g.examples.map((e) => (
              <li key={e.nodeRunId} data-testid="failure-example" data-run={e.runId} data-routed-around={e.routedAround ? '' : undefined}>
                <Link href={exampleHref(e)} className="mono">
                  {shortId(e.runId)}
                  <span className="muted">@{e.nodeId}</span>
                </Link>{' '}
                <span className="muted small" title={new Date(e.startedAt).toISOString()}>
                  {fmtAgo(e.startedAt, now)}
                </span>
                {e.routedAround ? (
                  <span className="badge fg-routed" title="the run succeeded anyway: on_fail routed around this node">
                    routed around
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
        </div>
        {replaySince !== null ? <ReplayGroupButton sig={g.sig} since={replaySince} nodes={g.failures} /> : null}
      </div>
      <div className="fg-side">
        <div className="fg-trend">
          <Sparkline trend={g.trend} />
          <span className="muted small">per day, {g.trend.length} days</span>
        </div>
        <dl className="fg-facts">
          <div>
            <dt>Spend</dt>
            <dd className="mono">{fmtCost(g.costUsd)}</dd>
          </div>
          <div>
            <dt>Last seen</dt>
            <dd>
              <span title={new Date(g.lastAt).toISOString()}>{fmtAgo(g.lastAt, now)}</span>
            </dd>
          </div>
          <div>
            <dt>First seen</dt>
            <dd>
              <LocalTime ms={g.firstAt} withDate />
            </dd>
          </div>
        </dl>
      </div>
    </li>
  );
}
