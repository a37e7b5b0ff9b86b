'use client';
// "What if" on the agent policy form, before saving: what the draft would have done on the agent's
// last N nodes, next to what today's policy measured over the same nodes — with the method, its
// 95% interval, and what the history is too thin to tell. Re-estimated as the draft changes.
import { useEffect, useState, type ReactNode } from 'react';
import { estimatePolicy, type EstimatePolicyResult } from '@/lib/actions/estimate-policy';
import type { Estimate, Figure, Measured, ModelHistory, WhatIfResult } from '@/lib/dashboard/what-if';
import { WHAT_IF_DEFAULT_WINDOW, WHAT_IF_WINDOWS, type EstimatePolicyRequest } from '@/lib/forms/estimate-policy';
import type { NodePolicy } from '@/lib/engine/types';
import { fmtCost, fmtMs } from '@/components/ui/format';
import { OutcomeBar } from './outcome-bar';

/** Quiet time after the last edit before the server is asked. */
const DEBOUNCE_MS = 400;

type Column = 'draft' | 'measured' | 'replayed';
type FigureKey = 'success' | 'answers' | 'costUsd' | 'p95LatencyMs';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const FORMAT: Record<FigureKey, (x: number) => string> = {
  success: pct,
  answers: (x) => x.toFixed(2),
  costUsd: fmtCost,
  p95LatencyMs: fmtMs,
};
const LABEL: Record<FigureKey, string> = { success: 'Success', answers: 'Answers per node', costUsd: 'Cost per node', p95LatencyMs: 'p95 latency' };
const COLUMN: Record<Column, string> = { draft: 'This draft, estimated', measured: 'Today’s policy, measured', replayed: 'Today’s policy, replayed' };

function samePolicy(a: NodePolicy, b: NodePolicy): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function Cell({ figure, k, column, lowerBound }: { figure: Figure | number; k: FigureKey; column: Column; lowerBound?: boolean }) {
  const f = typeof figure === 'number' ? { value: figure } : figure;
  const fmt = FORMAT[k];
  const interval = 'low' in f && (f.low !== f.value || f.high !== f.value || k === 'success') ? `${fmt(f.low)}–${fmt(f.high)}` : null;
  return (
    <td
      data-label={COLUMN[column]}
      data-testid="what-if-figure"
      data-figure={k}
      data-column={column}
      data-value={f.value}
      data-low={'low' in f ? f.low : undefined}
      data-high={'high' in f ? f.high : undefined}
    >
      <span className="wi-value mono">
        {lowerBound ? '≥ ' : ''}
        {fmt(f.value)}
      </span>
      {interval ? <span className="wi-interval mono">95%: {interval}</span> : null}
    </td>
  );
}

function Figures({ r }: { r: WhatIfResult & { measured: Measured; draft: Estimate; today: Estimate } }) {
  const unknown = r.draft.unknown.value > 0;
  const same = samePolicy(r.draft.policy, r.today.policy);
  return (
    <table className="wi-figures">
      <thead>
        <tr>
          <th scope="col">
            <span className="wi-sr">Figure</span>
          </th>
          <th scope="col">{same ? 'This draft (= today’s policy), estimated' : COLUMN.draft}</th>
          <th scope="col">{COLUMN.measured}</th>
          <th scope="col">{COLUMN.replayed}</th>
        </tr>
      </thead>
      <tbody>
        {(Object.keys(LABEL) as FigureKey[]).map((k) => (
          <tr key={k}>
            <th scope="row">{LABEL[k]}</th>
            <Cell figure={r.draft[k]} k={k} column="draft" lowerBound={unknown} />
            <Cell figure={k === 'success' ? r.measured.success : r.measured[k]} k={k} column="measured" />
            <Cell figure={r.today[k]} k={k} column="replayed" lowerBound={r.today.unknown.value > 0} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ModelRow({ m }: { m: ModelHistory }) {
  const c = m.counts;
  const other = c.client_error + c.not_sent;
  return (
    <li
      className={m.thin ? 'wi-model wi-thin' : 'wi-model'}
      data-testid="what-if-model"
      data-model={m.model}
      data-attempts={m.attempts}
      data-ok={c.ok}
      data-invalid={c.invalid}
      data-error={c.error + other}
      data-refusal={c.refusal}
      data-truncated={c.truncated}
    >
      <div className="wi-model-head">
        <span className="mono wi-model-name">{m.model}</span>
        {m.inDraft ? null : <span className="tag">not in the draft</span>}
        {m.attempts === 0 ? <span className="tag wi-flag">no history</span> : m.thin ? <span className="tag wi-flag">thin</span> : null}
      </div>
      {m.attempts ? (
        <>
          <OutcomeBar counts={{ ok: c.ok, invalid: c.invalid, error: c.error + other, refusal: c.refusal, truncated: c.truncated }} />
          <div className="mono small muted">
            {m.attempts} attempts · ok {c.ok} · invalid {c.invalid} · error {c.error}
            {other ? ` (+${other} not resendable)` : ''} · refusal {c.refusal} · truncated {c.truncated} · {fmtCost(m.meanCostUsd)} · {fmtMs(m.meanDurationMs)} each
          </div>
        </>
      ) : null}
    </li>
  );
}

function Warnings({ r }: { r: WhatIfResult }) {
  const byName = new Map(r.models.map((m) => [m.model, m]));
  const lines: ReactNode[] = [];
  if (r.missingModels.length) {
    const share = r.draft
      ? ` Nodes that would reach it (${pct(r.draft.unknown.value)} of them) are counted as unknown: success could be that much higher, and answers, cost and latency are lower bounds.`
      : '';
    lines.push(
      <p key="missing" data-testid="what-if-missing">
        <strong>No history</strong> for <span className="mono">{r.missingModels.join(', ')}</span>: {r.missingModels.length > 1 ? 'they never answered' : 'it never answered'} for
        this agent in these nodes.{share}
      </p>,
    );
  }
  if (r.thinModels.length) {
    lines.push(
      <p key="thin" data-testid="what-if-thin">
        <strong>Too thin to tell</strong>:{' '}
        {r.thinModels.map((m, i) => (
          <span key={m}>
            {i ? ', ' : ''}
            <span className="mono">{m}</span> has {byName.get(m)?.attempts ?? 0} attempts
          </span>
        ))}{' '}
        in these nodes (fewer than {r.method.thinAttempts}). Read its figures as a direction, not a number.
      </p>,
    );
  }
  if (r.draft && r.today && r.draft.policy.strict !== r.today.policy.strict)
    lines.push(
      <p key="strict">
        output.strict changes how the provider answers: this history, recorded with strict {String(r.today.policy.strict)}, cannot tell how. The estimate assumes the models answer
        as they did.
      </p>,
    );
  if (r.otherPolicy) lines.push(<p key="other">{r.otherPolicy} of these nodes ran under another policy than today’s: the measured column is what they did under theirs.</p>);
  return lines.length ? <div className="note wi-warnings">{lines}</div> : null;
}

function Method({ r }: { r: WhatIfResult }) {
  // thin models are flagged on their own; the rule of three speaks of the others
  const smallest = r.models.filter((m) => m.inDraft && !m.thin).reduce((n, m) => Math.min(n, m.attempts), Infinity);
  return (
    <details className="wi-method">
      <summary>How this is estimated</summary>
      <ul>
        <li>
          Each simulated attempt is one of that model’s stored attempts in these nodes, drawn at random — its outcome, cost and time together. The engine’s own policy rules (the
          same decide() a run uses) then retry, repair, fall back or fail, under one shared budget of retries + 1 answers per model. {r.method.nodes.toLocaleString('en')} simulated
          nodes, seed {r.method.seed}: the same history always gives the same figures.
        </li>
        <li>
          95% interval: the whole simulation repeated over {r.method.resamples} bootstrap resamples of the nodes (a node’s attempts stay together). Today’s measured success uses
          Wilson’s binomial interval.
        </li>
        <li>
          Transport retries (429, 5xx, timeouts, dropped connections) happen inside an attempt, below the policy: their waits and costs are part of every attempt drawn, and no
          policy field here changes them. Latency is the sum of a node’s attempt times.
        </li>
        <li>
          It assumes attempts are independent (a repair passes as often as a first answer) and that each model answers as it did here. The replayed column shows how far that is
          from what happened.
          {Number.isFinite(smallest) ? ` An outcome never seen in ${smallest} attempts may still happen up to about ${pct(3 / smallest)} of the time (rule of three).` : ''}
        </li>
        <li>
          Too thin to tell: a model of the draft chain with fewer than {r.method.thinAttempts} attempts in these nodes, or none.
          {r.leftOut ? ` ${r.leftOut} node${r.leftOut > 1 ? 's were' : ' was'} left out: an attempt was cut off without an outcome, or none was made.` : ''}
        </li>
      </ul>
    </details>
  );
}

export function WhatIfPanel({ agent, draft }: { agent: string; draft: EstimatePolicyRequest['policy'] | null }) {
  const [win, setWin] = useState<(typeof WHAT_IF_WINDOWS)[number]>(WHAT_IF_DEFAULT_WINDOW);
  const [answer, setAnswer] = useState<{ key: string; res: EstimatePolicyResult } | null>(null);
  const key = draft ? JSON.stringify({ agent, window: win, policy: draft }) : null;

  useEffect(() => {
    if (key === null) return;
    let live = true;
    const timer = setTimeout(() => {
      estimatePolicy(JSON.parse(key) as EstimatePolicyRequest).then(
        (res) => live && setAnswer({ key, res }),
        (err: unknown) => live && setAnswer({ key, res: { ok: false, error: `the estimate failed: ${err instanceof Error ? err.message : String(err)}` } }),
      );
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);

  const pending = key !== null && answer?.key !== key;
  const res = answer?.res;
  const r = res?.ok ? res.result : null;
  const state = key === null ? 'invalid' : pending ? 'pending' : res?.ok ? 'ready' : 'error';

  return (
    <section className="what-if" aria-labelledby="what-if-title" data-testid="what-if" data-state={state} aria-busy={pending}>
      <div className="wi-head">
        <h3 id="what-if-title">What if — before saving</h3>
        <label className="wi-window">
          Last
          <select value={win} onChange={(e) => setWin(Number(e.target.value) as typeof win)} aria-label="Nodes to estimate over">
            {WHAT_IF_WINDOWS.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
          nodes
        </label>
      </div>
      <p className="wi-status muted small" role="status" data-testid="what-if-status">
        {state === 'invalid'
          ? 'Fix the fields marked above to see what this policy would have done.'
          : pending
            ? 'Estimating…'
            : res && !res.ok
              ? res.error
              : r && r.nodes === 0
                ? `No finished node of ${agent} in flow runs yet: there is no history to estimate from.`
                : ''}
      </p>
      {r && r.nodes > 0 && r.measured && r.draft && r.today ? (
        <>
          <p className="wi-lead" data-testid="what-if-lead" data-nodes={r.nodes}>
            On the last <strong>{r.nodes}</strong> node{r.nodes > 1 ? 's' : ''} of <span className="mono">{agent}</span> in flow runs, this policy would have:
          </p>
          <Warnings r={r} />
          <div className="wi-figures-wrap">
            <Figures r={{ ...r, measured: r.measured, draft: r.draft, today: r.today }} />
          </div>
          <div className="section-label">History per model (these nodes)</div>
          <ul className="wi-models">
            {r.models.map((m) => (
              <ModelRow key={m.model} m={m} />
            ))}
          </ul>
          <Method r={r} />
        </>
      ) : null}
    </section>
  );
}
