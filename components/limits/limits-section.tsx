// The "Structural limits" section of the agent and providers pages: a heading, a line on what the
// figures are, on the agent page the nodes whose output schema asks for more than a model of the
// chain held (what `aqven check` warns about, W_SCHEMA_LIMIT), and the models' limits panel.
import Link from 'next/link';
import type { LimitsResponse, LimitWarningView } from '@/lib/dashboard/limits-view';
import { ModelLimitsPanel, type LimitsModel, type ProbeDefaults } from './model-limits-panel';

function Warnings({ warnings }: { warnings: LimitWarningView[] }) {
  return (
    <div className="limit-warnings" data-testid="limit-warnings">
      <div className="section-label">Nodes that ask for more</div>
      <ul>
        {warnings.map((w) => (
          <li key={`${w.file}:${w.line}:${w.col}`} data-testid="limit-warning" data-node={w.node}>
            <Link href={`/flows#flow-${encodeURIComponent(w.flow)}`} className="mono">
              {w.flow}/{w.node}
            </Link>{' '}
            <span className="mono muted small">
              {w.file}:{w.line}:{w.col}
            </span>
            <div className="small">{w.message}</div>
            <div className="hint small">{w.hint}</div>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function LimitsSection({
  models,
  initial,
  canStart,
  defaults,
  intro,
  warnings = [],
}: {
  models: LimitsModel[];
  initial: LimitsResponse;
  canStart: boolean;
  defaults: ProbeDefaults;
  intro: string;
  /** the agent page: W_SCHEMA_LIMIT of the nodes the agent runs */
  warnings?: LimitWarningView[];
}) {
  return (
    <section className="limits-section" aria-labelledby="limits-title" data-testid="limits-section">
      <h2 id="limits-title">Structural limits</h2>
      <p className="muted small">{intro}</p>
      {warnings.length ? <Warnings warnings={warnings} /> : null}
      <ModelLimitsPanel models={models} initial={initial} canStart={canStart} defaults={defaults} />
    </section>
  );
}
