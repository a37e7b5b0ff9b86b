// Every agent of the project with its policy and what its calls did (DESIGN: "The dashboard"). A
// table on a screen (it fits 1280 px: long model ids wrap, causes sit under the outcomes); on a
// phone each agent is a card of labelled lines (app/styles/agents.css, from data-label; the page
// imports it).
import Link from 'next/link';
import type { AgentDef } from '@/lib/project/types';
import type { AgentStatsView } from '@/lib/dashboard/agent-types';
import { fmtCost, splitModel } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { OutcomeBar, outcomeCounts } from './outcome-bar';

const CAUSES = ['provider_error', 'refusal', 'truncated', 'invalid_output', 'quota'];
const OUTCOMES = [
  ['ok', 'ok'],
  ['error', 'error'],
  ['refusal', 'refusal'],
  ['truncated', 'truncated'],
  ['invalid', 'invalid'],
] as const;

function Model({ model, fallback }: { model: string; fallback: boolean }) {
  const { provider, id } = splitModel(model);
  return (
    <div className="chain-line">
      {fallback ? (
        <span className="muted" aria-label="then">
          ↳{' '}
        </span>
      ) : null}
      {provider ? <span className="muted">{provider}:</span> : null}
      {id}
    </div>
  );
}

export function AgentTable({ agents, stats }: { agents: AgentDef[]; stats: Record<string, AgentStatsView | undefined> }) {
  return (
    <div className="table-scroll">
      <table className="grid agents">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Model chain</th>
            <th>Policy</th>
            <th className="num">Node runs</th>
            <th>Attempts by outcome</th>
            <th className="num">Cost</th>
            <th>Last run</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => {
            const s = stats[a.name];
            const c = s ? outcomeCounts(s.byOutcome, s.byCause) : null;
            const ran = s ? s.nodesTotal - (s.nodes.skipped ?? 0) : 0;
            const causes = s ? CAUSES.filter((k) => s.byCause[k]) : [];
            return (
              <tr key={a.name} data-testid="agent-row" data-agent={a.name}>
                <td className="agent-cell">
                  <Link href={`/agents/${encodeURIComponent(a.name)}`} className="mono">
                    <strong>{a.name}</strong>
                  </Link>
                  {a.description ? <div className="muted small">{a.description}</div> : null}
                </td>
                <td className="mono small chain-cell" data-label="Model chain">
                  {[a.model, ...a.fallbackModels].map((m, i) => (
                    <Model key={i} model={m} fallback={i > 0} />
                  ))}
                </td>
                <td className="mono small policy-cell" data-label="Policy">
                  <div>
                    retries {a.output.retries}
                    {a.output.strict ? ' · strict' : ''}
                  </div>
                  <div>
                    <span className="muted">error →</span> {a.output.onError}
                  </div>
                  <div>
                    <span className="muted">refusal →</span> {a.output.onRefusal}
                  </div>
                  <div>
                    <span className="muted">truncated →</span> {a.output.onTruncated}
                  </div>
                </td>
                <td className="num mono" data-label="Node runs" title="node runs that ran (skipped ones not counted)">
                  {ran}
                  <div className={`small${s?.nodes.failed ? ' error-text' : ' muted'}`}>{s?.nodes.failed ?? 0} failed</div>
                </td>
                <td className="bar-cell" data-label="Attempts">
                  <div className="mono small">{s?.attempts ?? 0} attempts</div>
                  {c ? <OutcomeBar counts={c} /> : <span className="muted">never ran</span>}
                  {c ? (
                    <div className="mono small counts">
                      {OUTCOMES.filter(([k]) => c[k] > 0).map(([k, label]) => (
                        <span key={k} className={`outcome-${k}`}>
                          {c[k]} {label}
                        </span>
                      ))}
                    </div>
                  ) : null}
                  {causes.length ? (
                    <div className="mono small muted cause-list" title="attempts by cause">
                      {causes.map((k) => (
                        <span key={k} className="cause-item">
                          {k} {s!.byCause[k]}
                        </span>
                      ))}
                    </div>
                  ) : null}
                </td>
                <td className="num mono" data-label="Cost">
                  {fmtCost(s?.costUsd ?? 0)}
                </td>
                <td className="small last-run" data-label="Last run">
                  {s?.lastRunAt ? <LocalTime ms={s.lastRunAt} withDate /> : <span className="muted">—</span>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
