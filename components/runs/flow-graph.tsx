'use client';
// The run's flow as a graph (DESIGN: The dashboard, "The flow graph"): nodes layered by `needs`,
// the `on_fail` routes dashed in red (bold when the run took one), each node in its state's colour
// and words — never-reached and pending nodes drawn open (dashed) so they read as "did not run".
// Drawn here in SVG: a flow has a handful of nodes and a layered layout (lib/dashboard/flow-graph.ts)
// is all it needs; a graph library would add weight and its own styling for no gain.
import { useId } from 'react';
import { layoutFlow, type FlowShape, type NodeState, type NodeStateView } from '@/lib/dashboard/flow-graph';
import { nodeAnchor } from '@/lib/dashboard/run-anchors';

const STATE_WORD: Record<NodeState, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  running: 'running',
  pending: 'pending',
  skipped: 'skipped',
  'not-needed': 'not needed',
  'not-reached': 'not reached',
};

const MARK: Record<NodeState, string> = {
  succeeded: '✓',
  failed: '✕',
  running: '●',
  pending: '○',
  skipped: '⊘',
  'not-needed': '–',
  'not-reached': '○',
};

const MAX_ID = 17;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function FlowGraph({ flow, states }: { flow: FlowShape; states: Map<string, NodeStateView> }) {
  const uid = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  const layout = layoutFlow(flow);
  const stateOf = (id: string): NodeStateView => states.get(id) ?? { state: 'not-reached', note: 'not reached', routedTo: null };
  const ran = (id: string) => ['succeeded', 'failed', 'running'].includes(stateOf(id).state);
  const summary = flow.nodes.map((n) => `${n.id}: ${stateOf(n.id).note}`).join('; ');
  const { nodeW: w, nodeH: h } = layout;
  return (
    <svg
      className="flow-graph"
      data-testid="flow-graph"
      role="group"
      aria-labelledby={`${uid}-t`}
      aria-describedby={`${uid}-d`}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
    >
      <title
        id={`${uid}-t`}
      >{`Flow ${flow.name}: ${flow.nodes.length} node${flow.nodes.length === 1 ? '' : 's'}, arrows from each node to the nodes that need it; dashed red arrows are on_fail routes`}</title>
      <desc id={`${uid}-d`}>{summary}</desc>
      <defs>
        <marker id={`${uid}-arrow`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" className="fg-arrow" />
        </marker>
        <marker id={`${uid}-arrow-fail`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" className="fg-arrow-fail" />
        </marker>
      </defs>
      {layout.edges.map((e) => {
        // a needs edge is live when both ends ran; an on_fail route when the run took it
        const taken = e.kind === 'on_fail' ? stateOf(e.from).routedTo === e.to : ran(e.from) && ran(e.to);
        return (
          <g
            key={`${e.kind}-${e.from}-${e.to}`}
            className={`fg-edge fg-${e.kind}${taken ? ' taken' : ''}`}
            data-testid="graph-edge"
            data-from={e.from}
            data-to={e.to}
            data-kind={e.kind}
            data-taken={taken}
          >
            <path d={e.d} markerEnd={`url(#${uid}-${e.kind === 'on_fail' ? 'arrow-fail' : 'arrow'})`} />
            {e.kind === 'on_fail' ? (
              <text x={e.labelX} y={e.labelY} className="fg-edge-label" textAnchor="middle" dominantBaseline="middle">
                on fail
              </text>
            ) : null}
          </g>
        );
      })}
      {layout.nodes.map((n) => {
        const s = stateOf(n.id);
        const label = `${n.id} (agent ${n.agent}): ${s.note}`;
        return (
          <a key={n.id} href={`#${nodeAnchor(n.id)}`} className={`fg-node st-${s.state}`} data-testid="graph-node" data-node={n.id} data-state={s.state} aria-label={label}>
            <title>{label}</title>
            <rect x={n.x} y={n.y} width={w} height={h} rx={7} />
            <text x={n.x + 10} y={n.y + 19} className="fg-id">
              {clip(n.id, MAX_ID)}
            </text>
            <text x={n.x + 10} y={n.y + 37} className="fg-state">
              <tspan className="fg-mark">{MARK[s.state]}</tspan> {STATE_WORD[s.state]}
              {s.routedTo ? ' → routed' : ''}
            </text>
          </a>
        );
      })}
    </svg>
  );
}

/** The legend and the sentences the graph stands for (routes taken, skipped nodes and why). */
export function FlowGraphNotes({ flow, states }: { flow: FlowShape; states: Map<string, NodeStateView> }) {
  const notable = flow.nodes.filter((n) => states.get(n.id)?.state !== 'succeeded');
  return (
    <div className="flow-notes">
      <ul className="flow-legend" aria-label="Legend">
        {(['succeeded', 'failed', 'running', 'pending', 'skipped', 'not-reached'] as const).map((s) => (
          <li key={s} className={`st-${s}`}>
            <span className="fg-swatch" aria-hidden /> {STATE_WORD[s]}
          </li>
        ))}
        <li className="fg-legend-fail">
          <span className="fg-swatch-line" aria-hidden /> on_fail route
        </li>
      </ul>
      {notable.length ? (
        <ul className="flow-facts" data-testid="flow-facts">
          {notable.map((n) => (
            <li key={n.id} data-node={n.id}>
              <a href={`#${nodeAnchor(n.id)}`} className="mono">
                {n.id}
              </a>{' '}
              <span className={`st-text-${states.get(n.id)?.state ?? 'not-reached'}`}>{states.get(n.id)?.note ?? 'not reached'}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">Every node succeeded.</p>
      )}
    </div>
  );
}
