// The node's model chain in order (DESIGN: "The dashboard"): which model answered, which were tried and
// failed, which were never called.
import type { ChainModel } from '@/lib/dashboard/run-view';
import { splitModel } from '@/components/ui/format';

const MARK = { answered: '✓', failed: '✕', untried: '○' } as const;
const WORD = { answered: 'answered', failed: 'tried, failed', untried: 'never called' } as const;

export function FallbackChain({ chain }: { chain: ChainModel[] }) {
  return (
    <ol className="chain" data-testid="fallback-chain" aria-label="Fallback chain">
      {chain.map((m) => {
        const p = splitModel(m.model);
        return [
          m.index > 0 ? (
            <li key={`arrow-${m.index}`} className="chain-arrow" aria-hidden>
              →
            </li>
          ) : null,
          <li
            key={m.index}
            className={`chain-model state-${m.state}${m.inFlight ? ' in-flight' : ''}`}
            data-testid="chain-model"
            data-model={m.model}
            data-state={m.state}
            title={`${m.model}: ${m.inFlight ? 'answering now' : WORD[m.state]}`}
          >
            <span className="chain-mark" aria-hidden>
              {m.inFlight ? '…' : MARK[m.state]}
            </span>
            <span className="mono">
              {m.index === 0 ? null : <span className="muted">{p.provider}:</span>}
              {m.index === 0 ? m.model : p.id}
            </span>
          </li>,
        ];
      })}
    </ol>
  );
}
