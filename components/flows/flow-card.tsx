// One flow of the project: its nodes (agent, needs, stream, on_fail), its input schema and the
// form that starts a run.
import Link from 'next/link';
import type { FlowDef } from '@/lib/project/types';
import { exampleInputText } from '@/lib/dashboard/example-input';
import { StartRunForm } from './start-run-form';

export function FlowCard({ flow, canRun = true }: { flow: FlowDef; canRun?: boolean }) {
  const nodes = Object.values(flow.nodes);
  const onFailTargets = new Set(nodes.map((n) => n.onFail).filter(Boolean));
  return (
    <article className="panel flow-card" data-testid="flow-card" data-flow={flow.name} aria-labelledby={`flow-${flow.name}`}>
      <div className="card-head">
        <h2 id={`flow-${flow.name}`} className="mono">
          {flow.name}
        </h2>
        <span className="muted mono">{flow.file}</span>
        <Link href={`/runs?flow=${encodeURIComponent(flow.name)}`} className="push-right">
          Runs of {flow.name} →
        </Link>
      </div>
      {flow.description ? <p className="description">{flow.description}</p> : null}
      <div className="flow-grid">
        <div>
          <div className="table-scroll">
            <table className="mini nodes">
              <thead>
                <tr>
                  <th>node</th>
                  <th>agent</th>
                  <th>needs</th>
                  <th>output</th>
                  <th>if it fails</th>
                </tr>
              </thead>
              <tbody>
                {nodes.map((n) => (
                  <tr key={n.id}>
                    <td className="mono" data-label="node">
                      {n.id}
                      {onFailTargets.has(n.id) ? <span className="tag">on_fail target</span> : null}
                    </td>
                    <td data-label="agent">
                      <Link href={`/agents/${encodeURIComponent(n.agent)}`} className="mono">
                        {n.agent}
                      </Link>
                    </td>
                    <td className="mono" data-label="needs">
                      {n.needs.join(', ') || '—'}
                    </td>
                    <td data-label="output">
                      {n.output ? 'JSON (checked)' : 'text'}
                      {n.stream ? <span className="tag">stream</span> : null}
                    </td>
                    <td className="mono" data-label="if it fails">
                      {n.onFail ? `→ ${n.onFail}` : 'run fails'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <details className="io">
            <summary>Input schema</summary>
            <pre>{JSON.stringify(flow.inputSchema ?? {}, null, 2)}</pre>
          </details>
        </div>
        {canRun ? (
          <StartRunForm flow={flow.name} example={exampleInputText(flow.inputSchema)} />
        ) : (
          <p className="muted small" data-testid="read-only">
            Viewers see the flow; an editor may start a run.
          </p>
        )}
      </div>
    </article>
  );
}
