'use client';
// A node's attempts (DESIGN: The dashboard, "Attempts"): identical attempts in a row fold into one
// line "×N" that opens to each of them; "Failed only" hides the ok answers; past TABLE_ABOVE attempts
// they are a compact table, a row per attempt (or run of repeats) that opens to its details. A link
// to an attempt (#attempt-<node>-<seq>) opens whatever hides it.
import { Fragment, useEffect, useRef, useState } from 'react';
import { collapseRepeats, failedOnly, isFailedAttempt, seqRange, TABLE_ABOVE, type AttemptGroup } from '@/lib/dashboard/attempt-groups';
import { readRunAnchor } from '@/lib/dashboard/run-anchors';
import { outcomeKey, waitedTotal, type AttemptFacts } from '@/lib/dashboard/run-view';
import { fmtCost, fmtMs, fmtTokens, splitModel } from '@/components/ui/format';
import { OutcomeChip } from '@/components/ui/status-badge';
import { AttemptDetail } from './attempt-detail';
import { LiveWaitText } from './run-live';

function outcomeLabel(a: AttemptFacts): string {
  const key = outcomeKey(a);
  if (a.outcome == null) return a.finishedAt == null ? 'in flight' : 'unfinished';
  return key === 'invalid' ? 'ok · invalid output' : a.outcome;
}

function sum(g: AttemptGroup, f: (a: AttemptFacts) => number): number {
  return g.attempts.reduce((s, a) => s + f(a), 0);
}

/**
 * What must open for attempt `seq` to be on screen: the "failed only" filter off when it hides the
 * attempt, and the key of its group when that is folded (a run of repeats, or any row of the table).
 */
function toReveal(attempts: AttemptFacts[], onlyFailed: boolean, seq: number): { unfilter: boolean; key: number | null } | null {
  if (!attempts.some((a) => a.seq === seq)) return null;
  const filtered = onlyFailed ? failedOnly(attempts) : attempts;
  const unfilter = !filtered.some((a) => a.seq === seq);
  const shown = unfilter ? attempts : filtered;
  const group = collapseRepeats(shown).find((g) => g.attempts.some((a) => a.seq === seq))!;
  return { unfilter, key: group.attempts.length > 1 || shown.length > TABLE_ABOVE ? group.key : null };
}

export function AttemptList({ nodeId, attempts, limit, stream, now }: { nodeId: string; attempts: AttemptFacts[]; limit: number | null; stream: boolean; now: number }) {
  const [onlyFailed, setOnlyFailed] = useState(false);
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const failedCount = attempts.filter(isFailedAttempt).length;
  const canFilter = failedCount > 0 && failedCount < attempts.length;
  const endedFailed = attempts.filter((a) => a.outcome != null && isFailedAttempt(a)).length;
  const shown = onlyFailed && canFilter ? failedOnly(attempts) : attempts;
  const groups = collapseRepeats(shown);
  const table = shown.length > TABLE_ABOVE;
  const toggle = (key: number) => setOpen((s) => (s.has(key) ? new Set([...s].filter((k) => k !== key)) : new Set([...s, key])));

  // a link to one of these attempts (on load, or a hash change: an attempt bar followed) opens what hides it
  const latest = useRef({ attempts, onlyFailed: onlyFailed && canFilter });
  useEffect(() => {
    latest.current = { attempts, onlyFailed: onlyFailed && canFilter };
  });
  useEffect(() => {
    const check = () => {
      const t = readRunAnchor(window.location.hash);
      if (t?.nodeId !== nodeId || t.seq === null) return;
      const r = toReveal(latest.current.attempts, latest.current.onlyFailed, t.seq);
      if (!r) return;
      if (r.unfilter) setOnlyFailed(false);
      if (r.key !== null) setOpen((s) => new Set([...s, r.key!]));
    };
    check();
    window.addEventListener('hashchange', check);
    return () => window.removeEventListener('hashchange', check);
  }, [nodeId]);

  const detail = (a: AttemptFacts) => <AttemptDetail key={a.seq} nodeId={nodeId} attempt={a} limit={limit} stream={stream} now={now} />;

  return (
    <div className="attempts-box">
      {attempts.length > 1 ? (
        <div className="attempts-tools">
          <span className="section-label">
            Attempts{' '}
            <span className="muted">
              · {attempts.length}
              {endedFailed ? `, ${endedFailed} failed` : ''}
            </span>
          </span>
          {canFilter ? (
            <button
              type="button"
              className={`small ${onlyFailed ? '' : 'secondary'}`}
              aria-pressed={onlyFailed}
              data-testid="failed-only"
              onClick={() => setOnlyFailed(!onlyFailed)}
            >
              Failed only
            </button>
          ) : null}
        </div>
      ) : null}
      {table ? (
        <div className="table-scroll">
          <table className="mini attempt-table" data-testid="attempt-table">
            <thead>
              <tr>
                <th aria-label="details" />
                <th>#</th>
                <th>model</th>
                <th>outcome</th>
                <th className="at-cause">cause → action</th>
                <th className="num at-tok">tokens in / out</th>
                <th className="num at-cost">cost</th>
                <th className="num at-time">took</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => {
                const a = g.attempts[0]!;
                const isOpen = open.has(g.key);
                const id = `attempts-${nodeId}-${g.key}`;
                const m = splitModel(a.model);
                return (
                  <Fragment key={g.key}>
                    <tr
                      className={`attempt-row o-${outcomeKey(a)}${isOpen ? ' open' : ''}`}
                      data-testid="attempt-row"
                      data-seq={a.seq}
                      data-count={g.attempts.length}
                      onClick={() => toggle(g.key)}
                    >
                      <td>
                        <button
                          type="button"
                          className="fold-toggle"
                          aria-expanded={isOpen}
                          aria-controls={id}
                          aria-label={`${isOpen ? 'Hide' : 'Show'} attempt ${seqRange(g)}`}
                          onClick={(e) => {
                            e.stopPropagation();
                            toggle(g.key);
                          }}
                        >
                          {isOpen ? '▾' : '▸'}
                        </button>
                      </td>
                      <td className="mono nowrap">
                        {seqRange(g)}
                        {g.attempts.length > 1 ? (
                          <span className="repeat-count" data-testid="repeat-count" title={`${g.attempts.length} identical attempts in a row`}>
                            ×{g.attempts.length}
                          </span>
                        ) : null}
                      </td>
                      <td className="mono at-model">
                        <span className="muted">{m.provider}:</span>
                        {m.id}
                      </td>
                      <td>
                        <OutcomeChip outcome={outcomeKey(a)} label={outcomeLabel(a)} />
                        {a.outcome == null ? <LiveWaitText attempt={a} pollNow={now} className="small" /> : null}
                      </td>
                      <td className="mono at-cause">
                        {a.cause ?? '—'}
                        {a.action && a.action !== 'none' ? ` → ${a.action}` : ''}
                      </td>
                      <td className="num mono at-tok">
                        {fmtTokens(sum(g, (x) => x.usage.inputTokens))} / {fmtTokens(sum(g, (x) => x.usage.outputTokens))}
                      </td>
                      <td className="num mono at-cost">{fmtCost(sum(g, (x) => x.usage.costUsd))}</td>
                      <td className="num mono at-time">{fmtMs(sum(g, (x) => (x.finishedAt ?? now) - x.startedAt))}</td>
                    </tr>
                    {isOpen ? (
                      <tr className="attempt-expanded" id={id}>
                        <td colSpan={8}>
                          <div className="attempts">{g.attempts.map(detail)}</div>
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : (
        <div className="attempts">
          {groups.map((g) => {
            if (g.attempts.length === 1) return detail(g.attempts[0]!);
            const a = g.attempts[0]!;
            const isOpen = open.has(g.key);
            const id = `attempts-${nodeId}-${g.key}`;
            const waited = sum(g, (x) => waitedTotal(x, now));
            return (
              <div key={g.key} className={`attempt-repeat o-${outcomeKey(a)}`} data-testid="attempt-repeat" data-seq={a.seq} data-count={g.attempts.length}>
                <div className="attempt-head">
                  <button
                    type="button"
                    className="fold-toggle"
                    aria-expanded={isOpen}
                    aria-controls={id}
                    onClick={() => toggle(g.key)}
                    aria-label={`${isOpen ? 'Hide' : 'Show'} attempts ${seqRange(g)}`}
                  >
                    {isOpen ? '▾' : '▸'}
                  </button>
                  <span className="attempt-seq mono">{seqRange(g)}</span>
                  <span className="repeat-count" data-testid="repeat-count" title={`${g.attempts.length} identical attempts in a row`}>
                    ×{g.attempts.length}
                  </span>
                  <span className="mono">{a.model}</span>
                  <OutcomeChip outcome={outcomeKey(a)} label={outcomeLabel(a)} />
                  {a.cause ? (
                    <span className="kv">
                      cause <b className="mono">{a.cause}</b>
                    </span>
                  ) : null}
                  {a.action && a.action !== 'none' ? (
                    <span className="kv action">
                      → <b className="mono">{a.action}</b>
                    </span>
                  ) : null}
                  <span className="attempt-metrics mono">
                    <span title="input / output tokens, all of them">
                      {fmtTokens(sum(g, (x) => x.usage.inputTokens))} / {fmtTokens(sum(g, (x) => x.usage.outputTokens))} tok
                    </span>
                    <span>{fmtCost(sum(g, (x) => x.usage.costUsd))}</span>
                    {waited > 0 ? <span>waited {fmtMs(waited)}</span> : null}
                  </span>
                </div>
                {a.error ? (
                  <div className="attempt-error small">
                    <span className="mono error-text">{a.error.kind}</span> {a.error.message}
                  </div>
                ) : null}
                {isOpen ? (
                  <div className="attempts" id={id}>
                    {g.attempts.map(detail)}
                  </div>
                ) : (
                  <button type="button" className="link-button small" onClick={() => toggle(g.key)} aria-controls={id} aria-expanded={false}>
                    Show all {g.attempts.length}
                  </button>
                )}
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}
