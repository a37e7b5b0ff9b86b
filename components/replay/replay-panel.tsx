// What the run page shows about replays (app/runs/[runId]/page.tsx reads `ctx`: replayContext): on
// a replay, the original node beside the replayed one; on a run that was replayed, its replays.
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import type { ReplayContext } from '@/lib/server/replay';
import { ReplayCompare } from './replay-compare';
import { ReplayLine } from './replay-line';

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
          <ReplayLine key={r.id} r={r} node={r.node} />
        ))}
      </ul>
    </section>
  );
}
