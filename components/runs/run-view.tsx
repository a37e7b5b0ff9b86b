'use client';
// The run page's live body: header and timeline, re-read from /api every second while the run
// is queued or running.
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { runWithoutNodes } from '@/lib/dashboard/run-status';
import { nodesByTurn, place, timeAxis } from '@/lib/dashboard/run-view';
import { RunHeader } from './run-header';
import { NodeRow } from './node-row';
import { useRunDetail } from './use-runs';

export function RunView({ initial, renderedAt }: { initial: RunDetailResponse; renderedAt: number }) {
  const { data: run, dataUpdatedAt, isError } = useRunDetail(initial.id, initial, renderedAt);
  const now = Math.max(dataUpdatedAt, renderedAt);
  const axis = timeAxis(run, now);
  const groups = nodesByTurn(run.nodes);
  const few = run.nodes.length <= 6;
  return (
    <>
      <RunHeader run={run} now={now} />
      {isError ? <p className="error-text">Could not refresh this run; showing the last data.</p> : null}
      <section className="timeline panel" aria-label="Timeline">
        <div className="timeline-head">
          <h2>Timeline</h2>
          <span className="legend">
            {['ok', 'error', 'refusal', 'truncated', 'invalid'].map((o) => (
              <span key={o} className={`legend-item o-${o}`}>
                <span className="swatch" />
                {o === 'invalid' ? 'invalid output' : o}
              </span>
            ))}
            <span className="legend-item">
              <span className="swatch swatch-pause" />
              rate-limit pause
            </span>
            <span className="legend-item">
              <span className="swatch swatch-wait" />
              wait before retry
            </span>
          </span>
        </div>
        {run.nodes.length === 0 ? (
          // no node to place on a time axis yet (a queued run): no axis either
          <p className="muted" data-testid="no-nodes">
            {runWithoutNodes(run.status)}
          </p>
        ) : (
          <div className="axis">
            <div className="axis-label muted">node</div>
            <div className="axis-track">
              {axis.ticks.map((t) => (
                <span key={t.at} className="tick" style={{ left: `${place(axis, t.at, t.at).left}%` }}>
                  {t.label}
                </span>
              ))}
            </div>
          </div>
        )}
        {groups.map((g) => (
          <div key={g.turn} className="turn" data-turn={g.turn}>
            <div className="turn-label">{g.turn === 0 ? 'not reached' : `turn ${g.turn}`}</div>
            {g.nodes.map((n) => (
              <div key={n.id} id={`node-${n.id}`}>
                <NodeRow node={n} axis={axis} now={now} defaultOpen={few || n.status === 'failed'} />
              </div>
            ))}
          </div>
        ))}
      </section>
    </>
  );
}
