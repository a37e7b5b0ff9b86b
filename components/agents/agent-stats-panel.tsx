// What one agent's calls did: outcomes, causes, actions, per model of its chain, and its recent
// failed nodes to debug from.
import Link from 'next/link';
import type { AgentFailure, AgentModelStats, AgentStatsView } from '@/lib/dashboard/agent-types';
import { fmtCost, fmtTokens, shortId, splitModel } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { OutcomeBar, outcomeCounts } from './outcome-bar';
import { runHref } from '@/lib/dashboard/run-anchors';

/** provider: muted, the model id as ink; wraps at its slashes and dashes on a phone */
function ModelName({ model }: { model: string }) {
  const { provider, id } = splitModel(model);
  return (
    <>
      {provider ? <span className="muted">{provider}:</span> : null}
      {id}
    </>
  );
}

function Counts({ title, values, order }: { title: string; values: Record<string, number>; order: string[] }) {
  const keys = [...order.filter((k) => values[k]), ...Object.keys(values).filter((k) => !order.includes(k))];
  return (
    <div className="count-box">
      <div className="section-label">{title}</div>
      {keys.length ? (
        <dl className="counts-list mono">
          {keys.map((k) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{values[k]}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p className="muted">none</p>
      )}
    </div>
  );
}

export function AgentStatsPanel({ stats, models, failures }: { stats: AgentStatsView | null; models: AgentModelStats[]; failures: AgentFailure[] }) {
  return (
    <aside className="agent-stats" aria-label="Statistics" data-testid="agent-stats">
      <h2>Outcomes</h2>
      {!stats ? (
        <p className="muted">This agent has not run yet.</p>
      ) : (
        <div className="panel">
          <OutcomeBar counts={outcomeCounts(stats.byOutcome, stats.byCause)} />
          <p className="mono small">
            {stats.nodesTotal - (stats.nodes.skipped ?? 0)} node runs{stats.nodes.skipped ? ` (+${stats.nodes.skipped} skipped)` : ''} ·{' '}
            <span className={stats.nodes.failed ? 'error-text' : undefined}>{stats.nodes.failed ?? 0} failed</span> · {stats.attempts} attempts · {fmtTokens(stats.inputTokens)} /{' '}
            {fmtTokens(stats.outputTokens)} tok · {fmtCost(stats.costUsd)}
          </p>
          <div className="count-grid">
            <Counts title="By outcome" values={stats.byOutcome} order={['ok', 'error', 'refusal', 'truncated']} />
            <Counts title="By cause" values={stats.byCause} order={['provider_error', 'refusal', 'truncated', 'invalid_output', 'quota']} />
            <Counts title="Then" values={stats.byAction} order={['none', 'retry', 'repair', 'fallback']} />
          </div>
        </div>
      )}
      {models.length ? (
        <>
          <h3>By model</h3>
          <div className="table-scroll">
            <table className="mini by-model">
              <thead>
                <tr>
                  <th>model</th>
                  <th className="num">attempts</th>
                  <th>outcomes</th>
                </tr>
              </thead>
              <tbody>
                {models.map((m) => (
                  <tr key={m.model}>
                    <td className="mono small">
                      <ModelName model={m.model} />
                    </td>
                    <td className="num mono">{m.attempts}</td>
                    <td className="bar-cell">
                      <OutcomeBar counts={outcomeCounts(m.byOutcome, { invalid_output: m.invalid })} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      {failures.length ? (
        <>
          <h3>Recent failed nodes</h3>
          <ul className="failures">
            {failures.map((f) => (
              <li key={`${f.runId}-${f.nodeId}`}>
                <Link href={runHref(f.runId, { node: f.nodeId })} className="mono">
                  {f.flow} {shortId(f.runId)} · {f.nodeId}
                </Link>{' '}
                <span className="mono error-text">{f.errorCode}</span> <LocalTime ms={f.startedAt} withDate />
                {f.errorMessage ? <div className="muted small">{f.errorMessage}</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </aside>
  );
}
