// One provider's configuration (DESIGN: "Project files"; "The dashboard"): protocol, endpoint (and where the simulator
// routes it), transport and rate-limit settings, the model catalogue with prices, and whether its
// key variable is set. The key itself is never read into the page: only present or missing.
import type { ResolvedProvider } from '@/lib/engine/types';

/** A configured duration as the provider file writes it ("60s"); a default is marked so. */
export interface DurationView {
  text: string;
  isDefault: boolean;
}

export type DurationKey = 'transport.budget' | 'transport.timeout' | 'transport.idle_timeout' | 'transport.try_deadline' | 'on_rate_limit.default_wait' | 'on_rate_limit.max_wait';

function Dur({ d }: { d: DurationView }) {
  return d.isDefault ? (
    <span className="dur-default" title="not set in the provider file: the built-in default">
      {d.text}
    </span>
  ) : (
    <span>{d.text}</span>
  );
}

/** Where an attempt's cost comes from: the reply's own figure when the protocol carries one, else this catalogue. */
function pricingNote(api: ResolvedProvider['api']): string {
  return api === 'openai'
    ? 'Runs are charged the cost the provider reports with each reply (usage.cost, as OpenRouter sends it); these catalogue prices are used only for a reply that reports none.'
    : 'This protocol reports no cost: runs are charged these catalogue prices for the tokens the provider reports.';
}

export interface ProviderView {
  provider: ResolvedProvider;
  /** where calls go when providers are simulated */
  simulatedUrl: string | null;
  keyState: 'present' | 'missing' | 'not needed';
  /** agents whose chain names this provider */
  usedBy: string[];
  /** the durations as written in the provider file, by YAML path */
  durations: Record<DurationKey, DurationView>;
}

export function ProviderCard({ view }: { view: ProviderView }) {
  const p = view.provider;
  const d = view.durations;
  const models = Object.entries(p.models);
  return (
    <article className="panel provider-card" data-testid="provider-card" data-provider={p.name} aria-labelledby={`provider-${p.name}`}>
      <div className="card-head">
        <h2 id={`provider-${p.name}`} className="mono">
          {p.name}
        </h2>
        <span className="tag">{p.api}</span>
        {view.usedBy.length ? <span className="muted">used by {view.usedBy.join(', ')}</span> : <span className="muted">no agent uses it</span>}
      </div>
      <dl className="kvlist">
        <dt>base_url</dt>
        <dd className="mono">
          {view.simulatedUrl ? (
            <>
              <span className="struck" title="not called: providers are simulated">
                {p.baseUrl}
              </span>{' '}
              <span className="badge badge-sim">simulated</span> → {view.simulatedUrl}
            </>
          ) : (
            p.baseUrl
          )}
        </dd>
        <dt>key</dt>
        <dd>
          {p.apiKeyEnv ? (
            <>
              <span className="mono">{p.apiKeyEnv}</span>{' '}
              <span className={`key-state key-${view.keyState.replace(' ', '-')}`} data-testid="key-state" data-state={view.keyState}>
                {view.keyState}
              </span>
              {view.keyState === 'missing' && view.simulatedUrl ? <span className="muted"> (not needed while simulated)</span> : null}
            </>
          ) : (
            <span className="muted">no key variable</span>
          )}
        </dd>
        <dt>structured_outputs</dt>
        <dd className="mono">{String(p.structuredOutputs)}</dd>
        <dt>transport</dt>
        <dd className="mono">
          max_attempts {p.transport.maxAttempts} · budget <Dur d={d['transport.budget']} /> · timeout <Dur d={d['transport.timeout']} /> · idle_timeout{' '}
          <Dur d={d['transport.idle_timeout']} /> · try_deadline <Dur d={d['transport.try_deadline']} /> · max_response_bytes {p.transport.maxResponseBytes}
        </dd>
        <dt>on_rate_limit</dt>
        <dd className="mono">
          max_attempts {p.onRateLimit.maxAttempts} · default_wait <Dur d={d['on_rate_limit.default_wait']} /> · max_wait <Dur d={d['on_rate_limit.max_wait']} />
        </dd>
        <dt>max_concurrency</dt>
        <dd className="mono">{p.maxConcurrency} in flight per model</dd>
      </dl>
      {models.length ? (
        <div className="table-scroll">
          <table className="mini catalogue">
            <caption>Catalogue prices (USD per 1M tokens)</caption>
            <thead>
              <tr>
                <th>model</th>
                <th className="num">input $/1M tok</th>
                <th className="num">output $/1M tok</th>
                <th>structured outputs</th>
              </tr>
            </thead>
            <tbody>
              {models.map(([id, m]) => (
                <tr key={id}>
                  <td className="mono">{id}</td>
                  <td className="num mono">{m.inputPerMtok ?? '—'}</td>
                  <td className="num mono">{m.outputPerMtok ?? '—'}</td>
                  <td className="mono">{m.structuredOutputs == null ? '—' : String(m.structuredOutputs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted small pricing-note" data-testid="pricing-note">
            {pricingNote(p.api)}
          </p>
        </div>
      ) : (
        <p className="muted" data-testid="pricing-note">
          No model catalogue: {p.api === 'openai' ? 'runs are charged only what the provider reports with each reply (usage.cost), else nothing.' : 'calls are not priced.'}
        </p>
      )}
    </article>
  );
}
