// One provider's configuration (DESIGN: "Project files"; "The dashboard"): protocol, endpoint (and where the simulator
// routes it), transport and rate-limit settings, the model catalogue with prices, and whether its
// key variable is set. The key itself is never read into the page: only present or missing.
import type { ResolvedProvider } from '@/lib/engine/types';
import { fmtMs } from '@/components/ui/format';

export interface ProviderView {
  provider: ResolvedProvider;
  /** where calls go when providers are simulated */
  simulatedUrl: string | null;
  keyState: 'present' | 'missing' | 'not needed';
  /** agents whose chain names this provider */
  usedBy: string[];
}

export function ProviderCard({ view }: { view: ProviderView }) {
  const p = view.provider;
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
          max_attempts {p.transport.maxAttempts} · budget {fmtMs(p.transport.budgetMs)} · timeout {fmtMs(p.transport.timeoutMs)} · idle_timeout{' '}
          {fmtMs(p.transport.idleTimeoutMs)} · try_deadline {fmtMs(p.transport.tryDeadlineMs)} · max_response_bytes {p.transport.maxResponseBytes}
        </dd>
        <dt>on_rate_limit</dt>
        <dd className="mono">
          max_attempts {p.onRateLimit.maxAttempts} · default_wait {fmtMs(p.onRateLimit.defaultWaitMs)} · max_wait {fmtMs(p.onRateLimit.maxWaitMs)}
        </dd>
        <dt>max_concurrency</dt>
        <dd className="mono">{p.maxConcurrency} in flight per model</dd>
      </dl>
      {models.length ? (
        <div className="table-scroll">
          <table className="mini catalogue">
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
        </div>
      ) : (
        <p className="muted">No model catalogue: calls are not priced.</p>
      )}
    </article>
  );
}
