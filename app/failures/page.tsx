import Link from 'next/link';
import { groupAlerts } from '@/db/alert-queries';
import { failureAgents, failureGroups } from '@/db/failure-queries';
import { FailureFilters } from '@/components/failures/failure-filters';
import { FailureGroupList } from '@/components/failures/failure-group-list';
import { RecentReplayBatches } from '@/components/replay/recent-replay-batches';
import { ProjectProblem } from '@/components/ui/project-problem';
import { splitModel } from '@/components/ui/format';
import { FAILURE_WINDOW_LABELS, FAILURE_WINDOWS, readFailureWindow } from '@/lib/dashboard/failure-groups';
import { recentBatches } from '@/lib/flow/replay-batch-store';
import { pageSession } from '@/lib/server/page-session';
import { roleAllows } from '@/lib/shared/roles';
import '@/app/styles/failures.css';
import '@/app/styles/replay.css';
import '@/app/styles/replay-batches.css';

export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

/** groups shown; the largest come first */
const GROUPS = 50;
/** recent replay batches listed under the groups */
const BATCHES = 8;

export default async function FailuresPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const s = await pageSession();
  const heading = <h1>Failures</h1>;
  if (!s.ok)
    return (
      <section>
        {heading}
        <ProjectProblem {...s} />
      </section>
    );
  const { db } = s.session;
  const win = readFailureWindow(sp.window);
  const agent = typeof sp.agent === 'string' ? sp.agent : '';
  const now = Date.now();
  const since = now - FAILURE_WINDOWS[win];
  const [groups, agents, batches] = await Promise.all([
    failureGroups(db, { since, agent: agent || undefined, limit: GROUPS, examples: 3 }),
    failureAgents(db, since),
    recentBatches(db, now, { limit: BATCHES }),
  ]);
  const total = groups.reduce((n, g) => n + g.failures, 0);
  // which groups alerted (aqven.yaml's alerts:, rule new_failure), and when
  const alerts = Object.fromEntries(
    await groupAlerts(
      db,
      groups.map((g) => g.sig),
    ),
  );
  return (
    <section className="failures-page">
      <div className="page-head">{heading}</div>
      <p className="muted description">
        Failed attempts and failed nodes of flow runs, grouped by agent, model, cause and message (its ids, numbers and quoted values replaced), the most frequent first. Replays
        are not counted.
      </p>
      <FailureFilters current={win} agent={agent} agents={agents} />
      {groups.length === 0 ? (
        <p className="empty" data-testid="no-failures">
          No failures {agent ? <>of agent {agent} </> : null}in the {FAILURE_WINDOW_LABELS[win].toLowerCase()}.{' '}
          {win !== '30d' ? <Link href={`/failures?window=30d${agent ? `&agent=${encodeURIComponent(agent)}` : ''}`}>Look at the last 30 days</Link> : null}
        </p>
      ) : (
        <>
          <p className="small muted fg-summary">
            {groups.length === GROUPS ? `The ${GROUPS} largest groups` : `${groups.length} group${groups.length === 1 ? '' : 's'}`}, {total.toLocaleString('en-US')} failures,{' '}
            {FAILURE_WINDOW_LABELS[win].toLowerCase()}.
          </p>
          <FailureGroupList groups={groups} now={now} replaySince={roleAllows(s.caller.role, 'editor') ? since : null} alerts={alerts} />
        </>
      )}
      <RecentReplayBatches
        batches={batches}
        groups={Object.fromEntries(groups.map((g) => [g.sig, [g.agent, g.model ? splitModel(g.model).id : 'node', g.code || 'no code'].join(' · ')]))}
        now={now}
      />
    </section>
  );
}
