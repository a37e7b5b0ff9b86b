'use client';
// Everything stored about one attempt (DESIGN: "The run record"): outcome, cause, what the engine did next,
// usage, latency, the redacted error, validation errors, transport tries, the request and the
// response.
import { isWaiting } from '@/lib/dashboard/live-wait';
import { isDropped, outcomeKey, usageLookupText, waitedTotal, type AttemptFacts } from '@/lib/dashboard/run-view';
import { fmtCost, fmtMs, fmtTokens } from '@/components/ui/format';
import { OutcomeChip } from '@/components/ui/status-badge';
import { CopyLink } from '@/components/notes/copy-link';
import { NoteThread } from '@/components/notes/note-thread';
import { LiveWaitText, useLiveWait } from './run-live';
import { attemptAnchor } from '@/lib/dashboard/run-anchors';
import { Fragment } from 'react';

/** `rate_limited` may wrap after its underscore on a phone, not mid-word */
function Breakable({ text }: { text: string }) {
  const parts = text.split('_');
  return parts.map((p, i) => (
    <Fragment key={i}>
      {p}
      {i < parts.length - 1 ? (
        <>
          _<wbr />
        </>
      ) : null}
    </Fragment>
  ));
}

const ACTION_TEXT: Record<string, string> = {
  retry: 'retried the same model',
  fallback: 'fell back to the next model',
  repair: 'asked the model to repair its output',
  none: '',
};

export function AttemptDetail({ nodeId, attempt: a, limit, stream, now }: { nodeId: string; attempt: AttemptFacts; limit: number | null; stream: boolean; now: number }) {
  const key = outcomeKey(a);
  const end = a.finishedAt ?? now;
  const waited = waitedTotal(a, now);
  const dropped = isDropped(a);
  const lookup = usageLookupText(a);
  const wait = useLiveWait(a, now);
  const waiting = isWaiting(wait);
  // one clean try needs no table
  const only = a.tries.length === 1 ? a.tries[0]! : null;
  const plainTry = only && only.error == null && only.status != null && only.status < 400 && only.waitedMs < 20 ? only : null;
  return (
    <article
      className={`attempt o-${key}`}
      id={attemptAnchor(nodeId, a.seq)}
      data-testid="attempt-detail"
      data-seq={a.seq}
      data-outcome={a.outcome ?? 'pending'}
      data-cause={a.cause ?? ''}
      data-action={a.action ?? 'none'}
      // focusable from its bar on the timeline (Enter on a bar moves focus here)
      tabIndex={-1}
      aria-label={`attempt #${a.seq} of node ${nodeId}`}
    >
      <header className="attempt-head">
        <span className="attempt-seq mono">#{a.seq}</span>
        <CopyLink nodeId={nodeId} seq={a.seq} />
        <span className="mono">{a.model}</span>
        <span className="muted">
          {a.error?.kind === 'not_sent' ? (
            <span title="the rate-limit gate refused to send it: no answer, and output.retries was not spent">not sent · no answer</span>
          ) : (
            <>
              answer {a.answerNo}
              {limit ? `/${limit}` : ''}
            </>
          )}
        </span>
        <OutcomeChip
          outcome={key}
          label={a.outcome == null ? (a.finishedAt == null ? (waiting ? 'waiting' : 'in flight') : 'unfinished') : key === 'invalid' ? 'ok · invalid output' : a.outcome}
        />
        {a.outcome == null ? <LiveWaitText attempt={a} pollNow={now} /> : null}
        {a.finishReason ? (
          <span className="muted small" title="finish reason as the provider sent it">
            finish <span className="mono">{a.finishReason}</span>
            {a.nativeFinishReason && a.nativeFinishReason !== a.finishReason ? (
              <>
                {' '}
                (native <span className="mono">{a.nativeFinishReason}</span>)
              </>
            ) : null}
          </span>
        ) : null}
        {a.finishNote ? (
          <span className="muted small finish-note" data-testid="finish-note" title="nothing in the finish reason said error, truncation or refusal, so the answer was taken as ok">
            {a.finishNote}
          </span>
        ) : null}
        {a.cause ? (
          <span className="kv">
            cause <b className="mono">{a.cause}</b>
          </span>
        ) : null}
        {a.action && a.action !== 'none' ? (
          <span className="kv action" title={ACTION_TEXT[a.action]}>
            → <b className="mono">{a.action}</b>
          </span>
        ) : null}
        {dropped ? (
          <span className="tag-dropped" title="this response was dropped: not part of the conversation, never validated; its tokens still count">
            dropped
          </span>
        ) : null}
        <span className="attempt-metrics mono">
          <span title="input / output tokens">
            {fmtTokens(a.usage.inputTokens)} / {fmtTokens(a.usage.outputTokens)} tok
          </span>
          {a.usageUnknown ? (
            <span
              className="usage-unknown"
              data-testid="usage-unknown"
              title="the provider did not report this attempt's usage (a reply not read to its end, or one that carried no usage): it may have billed tokens not counted here"
            >
              usage unknown
            </span>
          ) : null}
          {lookup ? (
            <span className="muted usage-lookup" data-testid="usage-lookup" title={lookup.title}>
              {lookup.text}
            </span>
          ) : null}
          {a.costSource === 'none' ? (
            <span className="usage-unknown" data-testid="cost-unknown" title="no price in the catalogue, and the provider states no cost: the cost is unknown, not $0">
              cost unknown
            </span>
          ) : (
            <span title={a.costSource === 'provider' ? 'the cost the provider stated it charged' : a.costSource === 'catalogue' ? 'priced by the catalogue' : undefined}>
              {fmtCost(a.usage.costUsd)}
            </span>
          )}
          {a.reasoningTokens ? <span title="reasoning tokens, part of the output tokens">{fmtTokens(a.reasoningTokens)} reasoning</span> : null}
          <span title="latency">{fmtMs(end - a.startedAt)}</span>
          {waited > 0 ? <span title="time spent waiting between or before transport tries">waited {fmtMs(waited)}</span> : null}
        </span>
      </header>

      {a.error ? (
        <div className="attempt-error">
          <div>
            <span className="mono error-text">{a.error.kind}</span> {a.error.message}
          </div>
          {a.error.detail ? (
            <pre className="detail" title="raw provider output, redacted before it was stored">
              {a.error.detail}
            </pre>
          ) : null}
        </div>
      ) : null}

      {a.validationErrors.length ? (
        <table className="mini validation">
          <caption>Validation errors</caption>
          <tbody>
            {a.validationErrors.map((v, i) => (
              <tr key={i}>
                <td className="mono">{v.pointer || '/'}</td>
                <td>{v.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      {plainTry ? (
        <div className="muted small mono">
          1 try · HTTP {plainTry.status} · {fmtMs(plainTry.finishedAt - plainTry.startedAt)}
        </div>
      ) : a.tries.length ? (
        <table className="mini tries">
          <caption>Transport tries</caption>
          <thead>
            <tr>
              <th>try</th>
              <th>status</th>
              <th>error</th>
              <th>retry-after</th>
              <th>waited</th>
              <th>took</th>
            </tr>
          </thead>
          <tbody>
            {a.tries.map((t) => (
              <tr key={t.tryNo} className={t.error || (t.status != null && t.status >= 400) ? 'try-bad' : undefined}>
                <td className="mono">{t.tryNo}</td>
                <td className="mono">{t.status ?? '—'}</td>
                <td className="mono">{t.error ? <Breakable text={t.error} /> : ''}</td>
                <td className="mono">{t.retryAfterMs != null ? fmtMs(t.retryAfterMs) : ''}</td>
                <td className="mono">{t.waitedMs ? fmtMs(t.waitedMs) : ''}</td>
                <td className="mono">{fmtMs(t.finishedAt - t.startedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      <details className="io">
        <summary>
          Request · {a.request.length} message{a.request.length === 1 ? '' : 's'}
        </summary>
        {a.request.map((m, i) => (
          <div key={i} className={`message role-${m.role}`}>
            <div className="role mono">{m.role}</div>
            <pre>{m.content}</pre>
          </div>
        ))}
      </details>

      {a.responseText != null ? (
        <details className="io">
          <summary>Response{dropped ? ' (dropped)' : ''}</summary>
          <pre className={dropped ? 'discarded' : undefined}>{a.responseText}</pre>
        </details>
      ) : null}

      {stream && a.streamedText && (a.discarded || a.streamedText !== a.responseText) ? (
        <details className="io" open={a.outcome == null}>
          <summary>Streamed text{a.discarded ? ' (discarded)' : ''}</summary>
          <pre className={a.discarded ? 'discarded' : undefined}>{a.streamedText}</pre>
        </details>
      ) : null}

      <NoteThread nodeId={nodeId} seq={a.seq} />
    </article>
  );
}
