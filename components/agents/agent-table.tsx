// Every agent of the project with its policy and what its calls did (DESIGN.md §14).
import Link from 'next/link';
import type { AgentDef } from '@/lib/project/types';
import type { AgentStatsView } from '@/lib/dashboard/agent-types';
import { fmtCost } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { OutcomeBar, outcomeCounts } from './outcome-bar';

const CAUSES = ['provider_error', 'refusal', 'truncated', 'invalid_output'];

export function AgentTable({ agents, stats }: { agents: AgentDef[]; stats: Record<string, AgentStatsView | undefined> }) {
  return (
    <table className="grid agents">
      <thead>
        <tr>
          <th>Agent</th>
          <th>Model chain</th>
          <th>Policy</th>
          <th className="num">Nodes</th>
          <th className="num">Failed</th>
          <th className="num">Attempts</th>
          <th>Outcomes</th>
          <th>By cause</th>
          <th className="num">Cost</th>
          <th>Last run</th>
        </tr>
      </thead>
      <tbody>
        {agents.map((a) => {
          const s = stats[a.name];
          const c = s ? outcomeCounts(s.byOutcome, s.byCause) : null;
          return (
            <tr key={a.name} data-testid="agent-row" data-agent={a.name}>
              <td>
                <Link href={`/agents/${encodeURIComponent(a.name)}`} className="mono">
                  <strong>{a.name}</strong>
                </Link>
                {a.description ? <div className="muted small">{a.description}</div> : null}
              </td>
              <td className="mono small">
                {[a.model, ...a.fallbackModels].map((m, i) => (
                  <div key={i}>
                    {i ? <span className="muted">↳ </span> : null}
                    {m}
                  </div>
                ))}
              </td>
              <td className="mono small">
                retries {a.output.retries}
                <br />
                error→{a.output.onError} · refusal→{a.output.onRefusal} · truncated→{a.output.onTruncated}
                {a.output.strict ? ' · strict' : ''}
              </td>
              <td className="num mono">{s?.nodesTotal ?? 0}</td>
              <td className={`num mono${s?.nodes.failed ? ' error-text' : ''}`}>{s?.nodes.failed ?? 0}</td>
              <td className="num mono">{s?.attempts ?? 0}</td>
              <td className="bar-cell">
                {c ? <OutcomeBar counts={c} /> : <span className="muted">never ran</span>}
                {c ? (
                  <div className="mono small counts">
                    <span className="outcome-ok">{c.ok} ok</span> <span className="outcome-error">{c.error} err</span> <span className="outcome-refusal">{c.refusal} ref</span>{' '}
                    <span className="outcome-truncated">{c.truncated} trunc</span> <span className="outcome-invalid">{c.invalid} inv</span>
                  </div>
                ) : null}
              </td>
              <td className="mono small">
                {s
                  ? CAUSES.filter((k) => s.byCause[k]).map((k) => (
                      <div key={k}>
                        {k} {s.byCause[k]}
                      </div>
                    ))
                  : null}
              </td>
              <td className="num mono">{fmtCost(s?.costUsd ?? 0)}</td>
              <td>{s?.lastRunAt ? <LocalTime ms={s.lastRunAt} withDate /> : <span className="muted">—</span>}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
