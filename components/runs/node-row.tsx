'use client';
// One node of a run: its line on the timeline, and below it the retry-budget gauges, the
// fallback chain, its error with a way to the agent's policy, the streamed text and the attempts.
import Link from 'next/link';
import { useState } from 'react';
import { answerLimit } from '@/lib/engine/policy';
import type { NodeFacts } from '@/lib/flow/run-record';
import { chainModels, nodeSpend, place, streamParts, type TimeAxis } from '@/lib/dashboard/run-view';
import { compactJson, fmtCost, fmtMs, fmtTokens } from '@/components/ui/format';
import { StatusBadge } from '@/components/ui/status-badge';
import type { NodeStateView } from '@/lib/dashboard/flow-graph';
import { AttemptBar } from './attempt-bar';
import { AttemptList } from './attempt-list';
import { BudgetGauge } from './budget-gauge';
import { FallbackChain } from './fallback-chain';
import { LiveWaitText } from './run-live';
import { CopyLink } from '@/components/notes/copy-link';
import { useOpenOnLink } from '@/components/notes/link-target';
import { NoteCount, NoteThread } from '@/components/notes/note-thread';
import { ReplayNodeLink } from '@/components/replay/replay-node-link';
import { nodeAnchor } from '@/lib/dashboard/run-anchors';
import { ErrorDocLink } from '@/components/docs/error-doc-link';

/** The badge of a node the run never started: "not reached", "not needed" (its stored status stays in data-status). */
const UNRUN_WORD: Partial<Record<NodeStateView['state'], string>> = { 'not-reached': 'not reached', 'not-needed': 'not needed' };

export function NodeRow({
  node,
  axis,
  now,
  defaultOpen,
  state,
  errorCodes = [],
}: {
  node: NodeFacts;
  axis: TimeAxis;
  now: number;
  defaultOpen: boolean;
  state?: NodeStateView;
  /** the codes docs/errors.md explains */
  errorCodes?: readonly string[];
}) {
  // nothing to open: skipped, or not started yet (a node of the flow without a row)
  const skipped = node.status === 'skipped' || (node.status === 'pending' && node.startedAt == null && node.attempts.length === 0);
  const [open, setOpen] = useState(defaultOpen && !skipped);
  const unrun = state ? UNRUN_WORD[state.state] : undefined;
  const inFlight = node.attempts.filter((a) => a.outcome == null && a.finishedAt == null);
  useOpenOnLink(node.id, setOpen);
  const chain = chainModels(node);
  const spend = nodeSpend(node);
  const stream = node.attempts.some((a) => a.streamedText != null || a.tries.some((t) => t.discardedText));
  const parts = streamParts(node);
  const span = node.startedAt != null && node.status !== 'skipped' ? place(axis, node.startedAt, node.finishedAt ?? now) : null;
  const limit = node.policy ? answerLimit(node.policy) : null;
  const bodyId = `node-body-${node.id}`;
  return (
    <section
      className={`node-row node-${node.status}${state ? ` st-${state.state}` : ''}`}
      data-testid="node-row"
      data-node={node.id}
      data-status={node.status}
      data-state={state?.state}
      aria-label={`node ${node.id}${state && state.note !== node.status ? `: ${state.note}` : ''}`}
    >
      <div className="node-line">
        <div className="node-label">
          {skipped ? (
            <span className="toggle" aria-hidden />
          ) : (
            <button type="button" className="toggle" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)} title={open ? 'Hide details' : 'Show details'}>
              {open ? '▾' : '▸'}
            </button>
          )}
          <span className="node-id mono">{node.id}</span>
          {unrun ? (
            <span className={`status status-skipped status-${state!.state}`} title={state!.note}>
              {unrun}
            </span>
          ) : (
            <StatusBadge status={node.status} title={state?.note} />
          )}
          <Link href={`/agents/${encodeURIComponent(node.agent)}`} className="node-agent mono" title="agent policy">
            {node.agent}
          </Link>
          <NoteCount nodeId={node.id} />
        </div>
        <div className="track">
          {axis.ticks.map((t) => (
            <span key={t.at} className="tick-line" style={{ left: `${place(axis, t.at, t.at).left}%` }} />
          ))}
          {span ? <span className="node-span" style={{ left: `${span.left}%`, width: `${span.width}%` }} /> : null}
          {node.attempts.map((a) => (
            <AttemptBar key={a.seq} nodeId={node.id} attempt={a} axis={axis} now={now} />
          ))}
          {skipped ? <span className="track-note muted">{state?.note ?? node.status}</span> : null}
        </div>
      </div>
      {inFlight.length ? (
        <div className="node-live" aria-live="polite">
          {inFlight.map((a) => (
            <span key={a.seq}>
              <span className="mono muted">#{a.seq}</span> <LiveWaitText attempt={a} pollNow={now} />
            </span>
          ))}
        </div>
      ) : null}
      {state?.routedTo ? (
        <div className="node-routed small" data-testid="node-routed">
          Routed around:{' '}
          <a href={`#${nodeAnchor(state.routedTo)}`} className="mono">
            {state.routedTo}
          </a>{' '}
          ran instead (on_fail).
        </div>
      ) : null}

      {open && !skipped ? (
        <div className="node-body" id={bodyId}>
          <div className="node-summary">
            <span className="muted">
              {node.attempts.length} attempt{node.attempts.length === 1 ? '' : 's'} · {fmtTokens(spend.total.inputTokens)} / {fmtTokens(spend.total.outputTokens)} tok ·{' '}
              {fmtCost(spend.total.costUsd)}
              {spend.dropped.attempts ? (
                <span className="dropped-spend">
                  {' '}
                  (dropped: {spend.dropped.attempts}, {fmtCost(spend.dropped.costUsd)})
                </span>
              ) : null}
              {node.startedAt != null && node.finishedAt != null ? ` · ${fmtMs(node.finishedAt - node.startedAt)}` : ''}
            </span>
            <CopyLink nodeId={node.id} />
            {node.policy ? (
              <span className="policy mono muted" title="the agent's policy when this node ran">
                retries {node.policy.retries} · on_error {node.policy.onError} · on_refusal {node.policy.onRefusal} · on_truncated {node.policy.onTruncated}
                {node.policy.strict ? ' · strict' : ''}
              </span>
            ) : null}
          </div>

          {node.error ? (
            <div className="node-error">
              <div>
                <span className="mono error-text">{node.error.code}</span> {node.error.message}
              </div>
              {node.error.hint ? (
                <div className="hint">
                  {node.error.hint}
                  <ErrorDocLink code={node.error.code} codes={errorCodes} />
                </div>
              ) : (
                <ErrorDocLink code={node.error.code} codes={errorCodes} />
              )}
              {node.status === 'failed' ? (
                <Link href={`/agents/${encodeURIComponent(node.agent)}`} className="policy-link">
                  Change the policy of agent {node.agent} →
                </Link>
              ) : null}
              <ReplayNodeLink nodeId={node.id} status={node.status} />
            </div>
          ) : null}

          {chain.length ? (
            <div className="node-budget">
              <div className="gauges">
                <div className="section-label">Retry budget</div>
                {chain.map((m) => (
                  <BudgetGauge
                    key={m.index}
                    model={m.model}
                    answers={m.answers}
                    limit={m.limit}
                    attempts={node.attempts.filter((a) => (node.policy ? a.chainIndex === m.index : a.model === m.model))}
                  />
                ))}
              </div>
              <div className="chain-box">
                <div className="section-label">Fallback chain</div>
                <FallbackChain chain={chain} />
              </div>
            </div>
          ) : null}

          {stream && parts.length ? (
            <div className="stream">
              <div className="section-label">Streamed text</div>
              <pre className="stream-text">
                {parts.map((p) => (
                  <span
                    key={p.key}
                    className={p.discarded ? 'discarded' : undefined}
                    title={`attempt #${p.seq}${p.tryNo ? `, try ${p.tryNo} (connection broke)` : ''}${p.discarded ? ': discarded' : ''}`}
                  >
                    {p.text}
                    {p.discarded ? '\n' : ''}
                  </span>
                ))}
              </pre>
            </div>
          ) : null}

          {node.status === 'succeeded' && node.output != null && !stream ? (
            <div className="node-output">
              <div className="section-label">Output</div>
              <pre>{compactJson(node.output)}</pre>
            </div>
          ) : null}

          <NoteThread nodeId={node.id} />

          {node.attempts.length ? <AttemptList nodeId={node.id} attempts={node.attempts} limit={limit} stream={stream} now={now} /> : null}
        </div>
      ) : null}
    </section>
  );
}
