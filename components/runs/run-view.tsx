'use client';
// The run page's live body: header, the flow as a graph, and the timeline, following the run's
// events (GET /api/runs/:id/events) while it is queued or running. With the flow's definition the page also shows the
// nodes not started yet (pending) and never reached, and places a skipped node in the turn it
// would have run (lib/dashboard/run-view.ts, placedTurn).
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { nodeStates, unstartedNodes, type FlowShape } from '@/lib/dashboard/flow-graph';
import type { BackoffConfig, PauseLite } from '@/lib/dashboard/live-wait';
import type { TraceLink } from '@/lib/dashboard/trace-link';
import { isLiveRun, runWithoutNodes } from '@/lib/dashboard/run-status';
import { nodesByTurn, place, timeAxis, type TurnGroup } from '@/lib/dashboard/run-view';
import { FlowGraph, FlowGraphNotes } from './flow-graph';
import { RunHeader } from './run-header';
import { NodeRow } from './node-row';
import { livePauses, RunLiveProvider } from './run-live';
import { useRunDetail } from './use-runs';
import { nodeAnchor } from '@/lib/dashboard/run-anchors';

/** not-reached holds nodes never reached and on_fail routes not needed: each row's badge says which */
const GROUP_LABEL: Record<TurnGroup['kind'], string> = { turn: '', pending: 'pending — not started yet', 'not-reached': 'not run' };

export function RunView({
  initial,
  renderedAt,
  flow = null,
  flowNote = null,
  backoffs = {},
  pauses = [],
  trace = null,
  errorCodes = [],
}: {
  initial: RunDetailResponse;
  renderedAt: number;
  /** the run's flow as the project has it now; null when the project no longer has the flow */
  flow?: FlowShape | null;
  /** said above the graph when the flow may differ from the one the run ran under */
  flowNote?: string | null;
  /** on_rate_limit settings per provider, for the wait of an attempt in flight */
  backoffs?: Record<string, BackoffConfig>;
  pauses?: PauseLite[];
  /** the run's trace in the team's trace UI (AQVEN_TRACE_URL) */
  trace?: TraceLink;
  /** the codes docs/errors.md explains: a hint links to its code's section */
  errorCodes?: string[];
}) {
  const { data: run, pauses: told, dataUpdatedAt, isError } = useRunDetail(initial.id, initial, renderedAt);
  const now = Math.max(dataUpdatedAt, renderedAt);
  const live = isLiveRun(run.status);
  const axis = timeAxis(run, now);
  const states = nodeStates(run, flow);
  const nodes = [...run.nodes, ...unstartedNodes(run, flow)];
  const groups = nodesByTurn(nodes, { flow, turns: run.turns, live });
  const few = nodes.length <= 6;
  return (
    <RunLiveProvider pauses={livePauses(pauses, told)} backoffs={backoffs}>
      <RunHeader run={run} now={now} trace={trace} errorCodes={errorCodes} />
      {isError ? <p className="error-text">Could not refresh this run; showing the last data.</p> : null}
      {flow ? (
        <section className="panel flow-panel" aria-labelledby="flow-graph-title">
          <div className="timeline-head">
            <h2 id="flow-graph-title">
              Flow <span className="mono">{flow.name}</span>
            </h2>
            {flowNote ? <span className="muted small">{flowNote}</span> : null}
          </div>
          <div className="flow-panel-body">
            <div className="flow-graph-box">
              <FlowGraph flow={flow} states={states} />
            </div>
            <FlowGraphNotes flow={flow} states={states} />
          </div>
        </section>
      ) : null}
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
          // no node to place on a time axis yet (a queued run): no axis either; the flow's nodes are listed as pending
          <p className="muted" data-testid="no-nodes">
            {runWithoutNodes(run.status)}
          </p>
        ) : (
          <div className="axis" aria-hidden>
            <div className="axis-label muted">node</div>
            <div className="axis-track">
              {axis.ticks.map((t, i) => {
                const left = place(axis, t.at, t.at).left;
                // the labels near the right end hang left of their tick, so none runs past the track
                return (
                  <span key={t.at} className={`tick${left > 88 ? ' tick-end' : ''}${i % 2 === 1 ? ' tick-odd' : ''}`} style={{ left: `${left}%` }}>
                    {t.label}
                  </span>
                );
              })}
            </div>
          </div>
        )}
        {groups.map((g) => (
          <div key={`${g.kind}-${g.turn}`} className={`turn turn-${g.kind}`} data-turn={g.turn} data-kind={g.kind}>
            <div className="turn-label">{g.kind === 'turn' ? `turn ${g.turn}` : GROUP_LABEL[g.kind]}</div>
            {g.nodes.map((n) => (
              <div key={n.id} id={nodeAnchor(n.id)}>
                <NodeRow node={n} axis={axis} now={now} defaultOpen={few || n.status === 'failed'} state={states.get(n.id)} errorCodes={errorCodes} />
              </div>
            ))}
          </div>
        ))}
      </section>
    </RunLiveProvider>
  );
}
