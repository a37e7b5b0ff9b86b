'use client';
// The current rate-limit pauses on /providers (DESIGN: The dashboard): per pause which model and
// provider, until when, and why — the server's wait as it sent it, and whether on_rate_limit.max_wait
// capped it — with a "Clear pause" button (server action clearRateLimitPause). The list is rendered
// by the server; after a clear the page is revalidated and the pause is gone from it.
import { useActionState, useState } from 'react';
import { LocalTime } from '@/components/ui/local-time';
import { fmtMs } from '@/components/ui/format';
import { clearRateLimitPause } from '@/lib/actions/clear-rate-limit-pause';
import type { ClearPauseState } from '@/lib/forms/clear-rate-limit-pause';
import type { PauseOrigin } from '@/lib/engine/types';

export interface PauseView {
  model: string;
  /** the provider part of the model string, and whether the project configures it */
  provider: string;
  providerKnown: boolean;
  modelId: string;
  pausedUntil: number;
  /** time left when the page was rendered */
  leftMs: number;
  reason: string;
  origin: PauseOrigin | null;
  /** on_rate_limit.max_wait of the pause as the provider file writes it ("60s") */
  maxWaitText: string | null;
}

const DAY = 86_400_000;
const YEAR = 365.2425 * DAY; // the Gregorian mean year

/** A wait of any length in words: "2.00 s", "3 h 5 m", "12 days", "7,974 years". */
export function fmtWait(ms: number): string {
  if (ms < 2 * DAY) return fmtMs(ms);
  if (ms < YEAR) return `${Math.round(ms / DAY)} days`;
  return `${Math.floor(ms / YEAR).toLocaleString('en-US')} years`;
}

/** Why the model is paused, in the order a reader asks: what the server sent, then the cap. */
function Why({ p }: { p: PauseView }) {
  const o = p.origin;
  if (!o) {
    return (
      <>
        {p.reason} <span className="muted">(stored before pauses recorded their origin)</span>
      </>
    );
  }
  const capped = o.askedMs > o.maxWaitMs;
  return (
    <>
      {p.reason} at <LocalTime ms={o.setAt} />;{' '}
      {o.serverWait ? (
        <>
          the server sent <code className="server-wait">{o.serverWait}</code> (a wait of {fmtWait(o.askedMs)})
        </>
      ) : (
        <>no retry-after was sent: backoff of {fmtWait(o.askedMs)} from on_rate_limit.default_wait</>
      )}
      .{' '}
      {capped ? (
        <strong className="capped" data-testid="pause-capped">
          Capped at on_rate_limit.max_wait ({p.maxWaitText ?? fmtMs(o.maxWaitMs)}).
        </strong>
      ) : (
        <span className="muted">Within on_rate_limit.max_wait ({p.maxWaitText ?? fmtMs(o.maxWaitMs)}).</span>
      )}
    </>
  );
}

export function RateLimitPauses({ pauses, canClear = true }: { pauses: PauseView[]; canClear?: boolean }) {
  const [state, formAction, pending] = useActionState(clearRateLimitPause, { status: 'idle' } as ClearPauseState);
  const [clearing, setClearing] = useState<string | null>(null);
  return (
    <>
      <div aria-live="polite" className="pause-status">
        {state.status === 'cleared' && !pending ? (
          <p className="saved" data-testid="pause-cleared" data-model={state.model}>
            {state.cleared ? 'Cleared the pause of' : 'Nothing to clear: the pause had already ended for'} <span className="mono">{state.model}</span>.
          </p>
        ) : null}
        {state.status === 'error' && !pending ? (
          <p className="field-error" data-testid="field-error" data-code={state.code} role="alert">
            <span className="code">{state.code}</span>
            {state.message}
          </p>
        ) : null}
      </div>
      {pauses.length === 0 ? (
        <p className="muted">No model is paused right now.</p>
      ) : (
        <ul className="pause-list">
          {pauses.map((p) => (
            <li key={p.model} className="pause" data-testid="rate-limit-pause" data-model={p.model} data-provider={p.provider}>
              <div className="pause-head">
                <span className="mono pause-model">{p.modelId}</span>
                {p.providerKnown ? (
                  <a className="tag" href={`#provider-${p.provider}`} title="this provider's configuration, below">
                    {p.provider}
                  </a>
                ) : (
                  <span className="tag">{p.provider}</span>
                )}
                {canClear ? (
                  <form action={formAction} onSubmit={() => setClearing(p.model)} className="pause-clear">
                    <input type="hidden" name="model" value={p.model} />
                    <button type="submit" className="small secondary" data-testid="clear-pause" disabled={pending} aria-label={`Clear pause of ${p.model}`}>
                      {pending && clearing === p.model ? 'Clearing…' : 'Clear pause'}
                    </button>
                  </form>
                ) : null}
              </div>
              <dl className="kvlist pause-facts">
                <dt>paused until</dt>
                <dd>
                  <LocalTime ms={p.pausedUntil} withDate /> <span className="muted">({fmtMs(p.leftMs)} left)</span>
                </dd>
                <dt>why</dt>
                <dd data-testid="pause-origin">
                  <Why p={p} />
                </dd>
              </dl>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
