'use client';
// The replay beside the original (DESIGN: The dashboard, "Replay with the current policy"): the
// same node as it ran then and as it ran again under the current files — outcome, answer, fallback
// chain, attempts, cost. The replay's side is live (its run page's poll) until it has ended.
import Link from 'next/link';
import type { ReactNode } from 'react';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { chainModels, nodeSpend, outcomeKey } from '@/lib/dashboard/run-view';
import { isLiveRun } from '@/lib/dashboard/run-status';
import { compactJson, fmtCost, shortId } from '@/components/ui/format';
import { OutcomeChip, StatusBadge } from '@/components/ui/status-badge';
import { FallbackChain } from '@/components/runs/fallback-chain';
import { useRunDetail } from '@/components/runs/use-runs';

type Node = RunDetailResponse['nodes'][number];

function Side({ title, node, side, runStatus }: { title: ReactNode; node: Node | null; side: 'original' | 'replay'; runStatus: string }) {
  if (!node) {
    return (
      <section className="replay-side" data-testid={`replay-${side}`} data-status="none">
        <h3>{title}</h3>
        <p className="muted">{isLiveRun(runStatus as RunDetailResponse['status']) ? 'Not started yet…' : 'This node is not stored.'}</p>
      </section>
    );
  }
  const spend = nodeSpend(node);
  const chain = chainModels(node);
  return (
    <section className={`replay-side node-${node.status}`} data-testid={`replay-${side}`} data-status={node.status}>
      <h3>{title}</h3>
      <dl className="replay-facts">
        <div>
          <dt>Outcome</dt>
          <dd>
            <StatusBadge status={node.status} testId={`replay-${side}-status`} />
            {node.error ? <span className="mono error-text replay-code"> {node.error.code}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd className="mono" data-testid={`replay-${side}-cost`}>
            {fmtCost(spend.total.costUsd)}
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd className="replay-attempts">
            {node.attempts.length === 0 ? <span className="muted">none</span> : null}
            {node.attempts.map((a) => (
              <OutcomeChip key={a.seq} outcome={outcomeKey(a)} label={`#${a.seq} ${a.model.replace(/^[^:]*:/, '')} ${a.outcome ?? '…'}`} />
            ))}
          </dd>
        </div>
      </dl>
      {chain.length ? (
        <div className="replay-chain">
          <div className="section-label">Fallback chain</div>
          <FallbackChain chain={chain} />
        </div>
      ) : null}
      <div className="section-label">{node.status === 'succeeded' ? 'Answer' : 'Error'}</div>
      {node.status === 'succeeded' ? (
        <pre className="replay-answer" data-testid={`replay-${side}-answer`}>
          {compactJson(node.output)}
        </pre>
      ) : node.error ? (
        <p className="replay-error" data-testid={`replay-${side}-answer`}>
          {node.error.message}
        </p>
      ) : (
        <p className="muted">{node.status}…</p>
      )}
    </section>
  );
}

/** Now succeeds, still fails, or still running: the one line a reader wants first. */
function verdict(before: Node | null, after: Node | null, runStatus: RunDetailResponse['status']): { key: string; text: string } {
  if (!after || after.status === 'running' || after.status === 'pending' || isLiveRun(runStatus)) return { key: 'running', text: 'Replaying…' };
  if (after.status === 'succeeded')
    return before?.status === 'succeeded' ? { key: 'same', text: 'Succeeds, as before' } : { key: 'fixed', text: 'Now succeeds under the current policy' };
  return before?.status === 'succeeded' ? { key: 'worse', text: 'Now fails (it succeeded before)' } : { key: 'still', text: 'Still fails under the current policy' };
}

export function ReplayCompare({
  replay,
  renderedAt,
  original,
  node,
}: {
  replay: RunDetailResponse;
  renderedAt: number;
  /** the original run and its node; null once the original was purged */
  original: { runId: string; status: string; node: Node | null } | null;
  node: string;
}) {
  const { data: run } = useRunDetail(replay.id, replay, renderedAt);
  const after = run.nodes.find((n) => n.id === node) ?? null;
  const before = original?.node ?? null;
  const v = verdict(before, after, run.status);
  return (
    <section className="replay-compare panel" data-testid="replay-compare" aria-label="Replay compared with the original">
      <div className="card-head replay-head">
        <h2>
          Replay of node <span className="mono">{node}</span>
        </h2>
        <span className={`replay-verdict v-${v.key}`} data-testid="replay-verdict" data-verdict={v.key}>
          {v.text}
        </span>
      </div>
      <p className="muted small replay-origin">
        {original ? (
          <>
            Run again with the original run’s input and its nodes’ stored outputs, under the current agent and flow files. Original:{' '}
            <Link href={`/runs/${encodeURIComponent(original.runId)}#node-${encodeURIComponent(node)}`} className="mono" data-testid="replay-original-link">
              run {shortId(original.runId)}
            </Link>
          </>
        ) : (
          'The original run is no longer stored.'
        )}
      </p>
      <div className="replay-sides">
        <Side title="Original · policy then" node={before} side="original" runStatus={original?.status ?? 'failed'} />
        <Side title="Replay · current policy" node={after} side="replay" runStatus={run.status} />
      </div>
    </section>
  );
}
