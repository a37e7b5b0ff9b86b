// The top of a run page: status, totals with the spend on dropped attempts apart, who started the
// run, the project version it ran under and its trace (linked to AQVEN_TRACE_URL's trace UI), and
// the error with its hint (DESIGN: "The dashboard").
import Link from 'next/link';
import { ErrorDocLink } from '@/components/docs/error-doc-link';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { projectVersion } from '@/lib/dashboard/run-origin';
import { runSpend } from '@/lib/dashboard/run-view';
import { fmtCost, fmtMs, fmtTokens, pretty } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import { RUN_STATUS_NOTES } from '@/lib/dashboard/run-status';
import { shortRunIdSpan } from '@/lib/shared/short-id';
import { nodeAnchor } from '@/lib/dashboard/run-anchors';
import type { TraceLink } from '@/lib/dashboard/trace-link';

/** long names and hashes wrap anywhere rather than widen the header past a phone's 390 px */
const WRAP = { overflowWrap: 'anywhere' } as const;

export function RunHeader({ run, now, trace = null, errorCodes = [] }: { run: RunDetailResponse; now: number; trace?: TraceLink; errorCodes?: readonly string[] }) {
  const spend = runSpend(run);
  const version = projectVersion(run);
  const attempts = run.nodes.reduce((n, x) => n + x.attempts.length, 0);
  const failedNode = run.error?.node ? run.nodes.find((n) => n.id === run.error!.node) : undefined;
  // a queued run has not started: its time is when it was queued, and how long it has waited
  const queued = run.status === 'queued';
  const short = shortRunIdSpan(run.id);
  return (
    <header className="run-header panel">
      <div className="run-title">
        <h1>
          Run <span className="mono">{run.flow}</span>
        </h1>
        <StatusBadge status={run.status} testId="run-status" title={RUN_STATUS_NOTES[run.status]} />
        {/* the short id, in bold, names the run too: /runs/<short>, aqven show <short> */}
        <span className="mono muted" title="run id (the part in bold names it too)" data-testid="run-id">
          {run.id.slice(0, short[0])}
          <strong className="run-short-id">{run.id.slice(...short)}</strong>
          {run.id.slice(short[1])}
        </span>
      </div>
      <dl className="facts">
        <div>
          <dt>{queued ? 'Queued' : 'Started'}</dt>
          <dd>
            <LocalTime ms={run.startedAt} withDate />
          </dd>
        </div>
        {run.startedBy ? (
          <div>
            <dt>{queued ? 'Queued by' : 'Started by'}</dt>
            <dd className="mono" data-testid="run-started-by" style={WRAP}>
              {run.startedBy}
            </dd>
          </div>
        ) : null}
        {run.traceId ? (
          <div>
            <dt>Trace</dt>
            <dd className="mono" data-testid="run-trace" style={WRAP}>
              {trace && 'href' in trace ? (
                <a href={trace.href} target="_blank" rel="noopener noreferrer" data-testid="run-trace-link">
                  {run.traceId}
                </a>
              ) : (
                <span title={trace && 'problem' in trace ? trace.problem : undefined}>{run.traceId}</span>
              )}
            </dd>
          </div>
        ) : null}
        {version ? (
          <div>
            <dt>Project</dt>
            <dd className="mono" data-testid="run-project-version" title={version.hash ?? undefined} style={WRAP}>
              {version.label}
            </dd>
          </div>
        ) : null}
        <div>
          <dt>{queued ? 'Waiting' : 'Duration'}</dt>
          <dd className="mono">{fmtMs((run.finishedAt ?? now) - run.startedAt)}</dd>
        </div>
        <div>
          <dt>Turns</dt>
          <dd className="mono">{run.turns}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd className="mono">{attempts}</dd>
        </div>
        <div>
          <dt>Tokens in / out</dt>
          <dd className="mono" data-testid="run-tokens">
            {fmtTokens(spend.total.inputTokens)} / {fmtTokens(spend.total.outputTokens)}
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd className="mono" data-testid="run-cost" data-usage-unknown={spend.total.usageUnknown}>
            {spend.total.usageUnknown || spend.total.unpriced ? '≥ ' : ''}
            {fmtCost(spend.total.costUsd)}
            {spend.total.usageUnknown ? (
              <span className="muted" title="some attempts never had their usage reported: the totals are a lower bound">
                {' '}
                · {spend.total.usageUnknown} attempt{spend.total.usageUnknown === 1 ? '' : 's'} without usage
              </span>
            ) : null}
            {spend.total.unpriced ? (
              <span className="muted" title="some attempts' models have no price in the catalogue and their provider states no cost: their cost is unknown, not $0">
                {' '}
                · {spend.total.unpriced} attempt{spend.total.unpriced === 1 ? '' : 's'} without a price
              </span>
            ) : null}
          </dd>
        </div>
        <div
          className={spend.dropped.attempts ? 'dropped-box' : undefined}
          title="attempts whose response was dropped (retried, fell back, repaired): their tokens and cost still count"
        >
          <dt>Spent on dropped attempts</dt>
          <dd className="mono" data-testid="dropped-spend">
            {spend.dropped.attempts
              ? `${fmtCost(spend.dropped.costUsd)} · ${fmtTokens(spend.dropped.inputTokens + spend.dropped.outputTokens)} tok · ${spend.dropped.attempts} attempt${spend.dropped.attempts === 1 ? '' : 's'}${spend.dropped.usageUnknown ? ` (${spend.dropped.usageUnknown} with usage unknown)` : ''}`
              : 'none'}
          </dd>
        </div>
      </dl>
      {run.error ? (
        <div className="run-error">
          <div>
            <span className="mono error-text" data-testid="error-code">
              {run.error.code}
            </span>
            {run.error.node ? (
              <>
                {' '}
                at node{' '}
                <a href={`#${nodeAnchor(run.error.node)}`} className="mono">
                  {run.error.node}
                </a>
              </>
            ) : null}
            : {run.error.message}
          </div>
          {run.error.hint ? (
            <div className="hint" data-testid="error-hint">
              {run.error.hint}
              <ErrorDocLink code={run.error.code} codes={errorCodes} />
              {failedNode ? (
                <>
                  {' '}
                  <Link href={`/agents/${encodeURIComponent(failedNode.agent)}`}>Edit agent {failedNode.agent} →</Link>
                </>
              ) : null}
            </div>
          ) : null}
        </div>
      ) : null}
      <div className="run-io">
        <details className="io">
          <summary>Input</summary>
          <pre>{pretty(run.input)}</pre>
        </details>
        {run.status === 'succeeded' ? (
          <details className="io">
            <summary>Output</summary>
            <pre>{pretty(run.output)}</pre>
          </details>
        ) : null}
      </div>
    </header>
  );
}
