// What the run page shows about replays (app/runs/[runId]/page.tsx reads `ctx`: replayContext): on
// a replay, the original node beside the replayed one; on a run that was replayed, its replays.
import Link from 'next/link';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import type { ReplayContext } from '@/lib/server/replay';
import { fmtCost, shortId } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import { ReplayCompare } from './replay-compare';

export function ReplayPanel({ ctx, run, renderedAt }: { ctx: ReplayContext; run: RunDetailResponse; renderedAt: number }) {
  if (!ctx) return null;
  if (ctx.kind === 'replay') {
    const original = ctx.original ? { runId: ctx.original.run.id, status: ctx.original.run.status, node: ctx.original.node } : null;
    return <ReplayCompare replay={run} renderedAt={renderedAt} original={original} node={ctx.node} />;
  }
  return (
    <section className="replays-of panel" data-testid="replays-of" aria-label="Replays of this run">
      <div className="section-label">Replays of this run</div>
      <ul>
        {ctx.replays.map((r) => (
          <li key={r.id}>
            <Link href={`/runs/${encodeURIComponent(r.id)}`} className="mono">
              {shortId(r.id)}
            </Link>{' '}
            node <span className="mono">{r.node}</span> <StatusBadge status={r.status} /> <span className="mono muted">{fmtCost(r.costUsd)}</span>{' '}
            <span className="muted small">
              <LocalTime ms={r.startedAt} withDate />
              {r.startedBy ? ` · ${r.startedBy}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
