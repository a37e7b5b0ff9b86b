// The replay preview of one node (DESIGN: The dashboard, "Replay with the current policy"), for
// editors: before anything runs, the request the current files would send against the original's,
// what changed in the agent's policy, and the estimated cost with a cap to set; then Start.
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { PromptDiff } from '@/components/replay/prompt-diff';
import { ReplayLine } from '@/components/replay/replay-line';
import { ReplayStartForm } from '@/components/replay/replay-start-form';
import { AmbiguousRunId } from '@/components/search/ambiguous-run-id';
import { fmtCost, shortId } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { ProjectProblem } from '@/components/ui/project-problem';
import { StatusBadge } from '@/components/ui/status-badge';
import { suggestedCap } from '@/lib/forms/replay';
import { pageSession } from '@/lib/server/page-session';
import { replayPreview } from '@/lib/server/replay';
import '@/app/styles/replay.css';
import { replayHref, runHref } from '@/lib/dashboard/run-anchors';

export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

export default async function ReplayPage({ params, searchParams }: { params: Promise<{ runId: string }>; searchParams: Promise<SearchParams> }) {
  const { runId } = await params;
  const sp = await searchParams;
  const node = typeof sp.node === 'string' ? sp.node : '';
  const s = await pageSession('editor');
  const back = (
    <nav className="crumbs">
      <Link href={runHref(runId, node ? { node } : undefined)}>← Run {shortId(runId)}</Link>
    </nav>
  );
  if (!s.ok)
    return (
      <section>
        {back}
        <ProjectProblem {...s} />
      </section>
    );
  const heading = <h1>Replay {node ? <span className="mono">{node}</span> : 'a node'} with the current policy</h1>;
  if (!node) {
    return (
      <section>
        {back}
        {heading}
        <p className="hint" role="alert">
          Which node? Open this page from a failed node of the run page.
        </p>
      </section>
    );
  }
  const p = await replayPreview(runId, node);
  // a short id or prefix: the page of the run it names, as the run page does (an ambiguous one lists the runs, never a guess)
  if (p.ok && p.runId !== runId) redirect(replayHref(p.runId, node));
  if (!p.ok && p.ambiguous) return <AmbiguousRunId prefix={runId} matches={p.ambiguous.matches} more={p.ambiguous.more} hrefOf={(id) => replayHref(id, node)} />;
  if (!p.ok) {
    return (
      <section className="replay-page">
        {back}
        {heading}
        <div className="hint" role="alert" data-testid="replay-refused" data-code={p.code}>
          <span className="mono">{p.code}</span> {p.error}
        </div>
      </section>
    );
  }
  const e = p.estimate;
  const cap = suggestedCap(e.costUsd);
  return (
    <section className="replay-page" data-testid="replay-preview">
      {back}
      {heading}
      <p className="description">
        Runs node <span className="mono">{p.nodeId}</span> of flow <span className="mono">{p.flow}</span> again, as a new run linked to the original: the same run input and the
        stored outputs of the nodes it needs, sent through the agent and flow files as they are now, to{' '}
        {p.simulated ? 'the simulated providers (AQVEN_SIMULATE)' : 'the configured providers'}. Nothing else of the flow runs.
      </p>

      <div className="replay-grid">
        <section className="panel replay-original" aria-label="The original node">
          <div className="section-label">The original</div>
          <dl className="replay-facts">
            <div>
              <dt>Node</dt>
              <dd>
                <span className="mono">{p.nodeId}</span> <StatusBadge status={p.original.status} testId="replay-original-status" />
              </dd>
            </div>
            <div>
              <dt>Agent</dt>
              <dd>
                <Link href={`/agents/${encodeURIComponent(p.agent)}`} className="mono">
                  {p.agent}
                </Link>
              </dd>
            </div>
            <div>
              <dt>Ran</dt>
              <dd>
                <LocalTime ms={p.original.startedAt} withDate />
              </dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd className="mono">{fmtCost(e.originalCostUsd)}</dd>
            </div>
          </dl>
          {p.original.error ? (
            <p className="replay-error">
              <span className="mono error-text">{p.original.error.code}</span> {p.original.error.message}
            </p>
          ) : null}
        </section>

        <section className="panel replay-policy" aria-label="Policy changes" data-testid="replay-policy">
          <div className="section-label">Policy: then ⇒ now</div>
          {p.policy.length ? (
            <ul className="mono replay-policy-list">
              {p.policy.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">The agent’s policy is the same as when the node ran.</p>
          )}
          <p className="small muted">
            Chain now: <span className="mono">{p.chainNow.join(' → ')}</span>
          </p>
        </section>
      </div>

      <section className="panel" aria-label="Prompt diff">
        <div className="section-label">Request: original ⇒ current files</div>
        <PromptDiff lines={p.diff.lines} changed={p.diff.changed} hadRequest={p.original.attempts.length > 0} />
      </section>

      <section className="panel replay-estimate" aria-label="Cost estimate" data-testid="replay-estimate">
        <div className="section-label">Cost</div>
        <p>
          Estimated{' '}
          <strong className="mono" data-testid="replay-estimate-cost">
            {fmtCost(e.costUsd)}
          </strong>
          : {p.basis}. Today’s policy allows up to {e.maxAnswers} answer
          {e.maxAnswers === 1 ? '' : 's'} for this node.
        </p>
        <p className="small muted">
          A replay whose estimate is over the cap does not start; one that reaches the cap while it runs makes no further attempt and ends interrupted. It counts against your run
          starts per minute, and is not counted in the agent’s statistics.
        </p>
        <ReplayStartForm runId={p.runId} nodeId={p.nodeId} suggestedCap={cap} />
      </section>

      {p.earlier.length ? (
        <section className="panel" aria-label="Earlier replays">
          <div className="section-label">Earlier replays of this node</div>
          <ul className="replay-earlier">
            {p.earlier.map((r) => (
              <ReplayLine key={r.id} r={r} />
            ))}
          </ul>
        </section>
      ) : null}
    </section>
  );
}
