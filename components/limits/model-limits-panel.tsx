'use client';
// The measured structural limits of some models (DESIGN: Structural limits, "On the dashboard"), for
// the agent page (its model and fallback models) and the providers page (every model in use): per
// dimension the last level that held, the first that failed and when it was measured; each level's
// first-try rate with its interval as it completes. Editors can start a probe (server action
// startLimitsAction) and watch it: GET /api/limits is polled while a probe of these models runs.
// Its styles are app/styles/limits.css.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useActionState, useEffect, useRef, useState } from 'react';
import { fmtCost, shortId, splitModel } from '@/components/ui/format';
import { startLimitsAction } from '@/lib/actions/start-limits';
import type { DimensionView, Figure, LimitsResponse, ModelLimitsView, ProbeView } from '@/lib/dashboard/limits-view';
import type { StartLimitsState } from '@/lib/forms/limits';
import type { LimitDimension } from '@/lib/shared/limits-types';
import '@/app/styles/limits.css';
import { runHref } from '@/lib/dashboard/run-anchors';

const POLL_MS = 1000;

export interface LimitsModel {
  model: string;
  /** its place in the agent's chain; null on the providers page */
  role: 'model' | 'fallback' | null;
}

export interface ProbeDefaults {
  trials: number;
  maxCalls: number;
  maxCostUsd: number;
}

const TITLES: Record<LimitDimension, string> = { depth: 'Nesting depth', list: 'List length', enum: 'Enum size' };
const DIMENSIONS: LimitDimension[] = ['depth', 'list', 'enum'];

/** A level in the words the page uses: "depth 5", "lists of 40 items", "enums of 30 values". */
function levelText(dimension: LimitDimension, level: number): string {
  return dimension === 'depth' ? `depth ${level}` : dimension === 'list' ? `lists of ${level} items` : `enums of ${level} values`;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const interval = (f: Figure) => `${pct(f.low)}–${pct(f.high)}`;

async function getLimits(models: readonly string[]): Promise<LimitsResponse> {
  const url = `/api/limits?${models.map((m) => `model=${encodeURIComponent(m)}`).join('&')}`;
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as LimitsResponse;
}

const live = (d: LimitsResponse | undefined) => !!d && (d.probes.some((p) => !p.done) || d.models.some((m) => m.dimensions.some((x) => x.status === 'running')));

function ModelName({ model }: { model: string }) {
  const { provider, id } = splitModel(model);
  return (
    <span className="mono limits-model-name">
      {provider ? <span className="muted">{provider}:</span> : null}
      {id}
    </span>
  );
}

/** The headline of one dimension: the last level that held and the first that failed. */
function DimensionCell({ dimension, d }: { dimension: LimitDimension; d: DimensionView | undefined }) {
  if (!d) {
    return (
      <div className="limit-cell" data-testid="limit-cell" data-dimension={dimension} data-measured="false">
        <div className="section-label">{TITLES[dimension]}</div>
        <div className="limit-figure muted">—</div>
        <div className="muted small">not measured</div>
      </div>
    );
  }
  const failedLevel = d.levels.find((l) => l.level === d.firstFailed);
  return (
    <div
      className="limit-cell"
      data-testid="limit-cell"
      data-dimension={dimension}
      data-measured="true"
      data-held={d.lastHeld ?? ''}
      data-failed={d.firstFailed ?? ''}
      data-status={d.status}
    >
      <div className="section-label">{TITLES[dimension]}</div>
      <div className="limit-figure">
        {d.lastHeld !== null ? (
          <>
            <span className="mono" data-testid="limit-held">
              {d.lastHeld}
            </span>
            <span className="muted small"> held</span>
          </>
        ) : (
          <span className="muted small">none held</span>
        )}
      </div>
      <div className="small">
        {d.firstFailed !== null ? (
          <>
            fails at <span className="mono">{d.firstFailed}</span>
            {failedLevel ? <span className="muted"> ({pct(failedLevel.firstTry.value)} first try)</span> : null}
          </>
        ) : (
          <span className="muted">no level failed</span>
        )}
      </div>
      <div className="muted small">
        {d.status === 'complete' ? null : (
          <span className={`status ${d.status === 'running' ? 'status-running' : 'status-interrupted'}`} data-testid="limit-status">
            {d.status === 'running' ? <span className="pulse" aria-hidden /> : null}
            {d.status}
          </span>
        )}{' '}
        <span title={`updated ${new Date(d.updatedAt).toISOString()}`}>{d.measuredOn}</span>
      </div>
    </div>
  );
}

/** Every level measured, smallest first: held (at or above the threshold on the first try) or not. */
function LevelStrip({ d }: { d: DimensionView }) {
  return (
    <ol className="limit-levels" aria-label={`${TITLES[d.dimension]}: levels measured`}>
      {d.levels.map((l) => (
        <li
          key={l.level}
          className={`limit-level ${l.held ? 'held' : 'failed'}`}
          data-testid="limit-level"
          data-level={l.level}
          title={`${levelText(d.dimension, l.level)}: ${pct(l.firstTry.value)} valid on the first try (95% interval ${interval(l.firstTry)}), ${pct(l.afterRepair.value)} after one repair; ${l.judged} of ${l.trials} trials judged${l.truncated ? `, ${l.truncated} cut off by max_tokens` : ''}`}
        >
          <span className="mono">{l.level}</span> <span className="limit-rate">{pct(l.firstTry.value)}</span>
        </li>
      ))}
    </ol>
  );
}

function LevelTable({ d }: { d: DimensionView }) {
  const hasCorrect = d.levels.some((l) => l.correct);
  return (
    <table className="mini limit-table">
      <thead>
        <tr>
          <th className="num">Level</th>
          <th>First try</th>
          <th>After repair</th>
          {hasCorrect ? <th>Right value</th> : null}
          <th className="num">Cut off</th>
        </tr>
      </thead>
      <tbody>
        {d.levels.map((l) => (
          <tr key={l.level} className={l.held ? undefined : 'limit-row-failed'}>
            <td className="num mono">{l.level}</td>
            <td className="mono">
              {pct(l.firstTry.value)} <span className="muted">{interval(l.firstTry)}</span>
            </td>
            <td className="mono">{pct(l.afterRepair.value)}</td>
            {hasCorrect ? <td className="mono">{l.correct ? pct(l.correct.value) : '—'}</td> : null}
            <td className="num mono">
              {l.truncated}/{l.trials}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ProbeProgress({ p }: { p: ProbeView }) {
  const share = Math.min(1, Math.max(p.calls / p.maxCalls, p.maxCostUsd > 0 ? p.costUsd / p.maxCostUsd : 0));
  return (
    <div className="limit-probe" data-testid="limit-probe" data-done={p.done}>
      {!p.done ? (
        <div className="limit-progress" role="progressbar" aria-label="Budget spent" aria-valuemin={0} aria-valuemax={p.maxCalls} aria-valuenow={p.calls}>
          <span style={{ width: `${Math.round(share * 100)}%` }} />
        </div>
      ) : null}
      <p className="small" data-testid="limit-probe-summary">
        {p.done ? (
          <strong>{p.stopped ? 'Stopped' : 'Measured'}</strong>
        ) : (
          <strong>Measuring {p.current ? `${levelText(p.current.dimension, p.current.level)} (${p.current.done} of ${p.current.trials} trials)` : '…'}</strong>
        )}
        {' · '}
        <span className="mono">
          {p.calls}/{p.maxCalls}
        </span>{' '}
        calls · <span className="mono">{fmtCost(p.costUsd)}</span> of <span className="mono">{fmtCost(p.maxCostUsd)}</span>
        {p.runId ? (
          <>
            {' · '}
            <Link href={runHref(p.runId)} className="mono">
              run {shortId(p.runId)}
            </Link>
          </>
        ) : null}
      </p>
      {p.stopped ? (
        <p className="hint small" data-testid="limit-probe-stopped">
          {p.stopped} — what was measured is kept; starting again the same day resumes it.
        </p>
      ) : null}
    </div>
  );
}

function StartForm({ model, defaults, onStarted }: { model: string; defaults: ProbeDefaults; onStarted: () => void }) {
  const [state, formAction, pending] = useActionState(startLimitsAction, { status: 'idle' } as StartLimitsState);
  const [open, setOpen] = useState(false);
  // each answer of the action is acted on once
  const handled = useRef<StartLimitsState | null>(null);
  useEffect(() => {
    if (state.status !== 'started' || handled.current === state) return;
    handled.current = state;
    setOpen(false);
    onStarted();
  }, [state, onStarted]);
  if (!open) {
    return (
      <button type="button" className="small secondary" onClick={() => setOpen(true)} data-testid="limits-open">
        Measure limits…
      </button>
    );
  }
  const error = state.status === 'error' ? state : null;
  return (
    <form action={formAction} className="limits-form" data-testid="limits-form">
      <input type="hidden" name="model" value={model} />
      <label>
        <span>Dimensions</span>
        <select name="dimension" defaultValue="all">
          <option value="all">all three</option>
          <option value="depth">nesting depth</option>
          <option value="list">list length</option>
          <option value="enum">enum size</option>
        </select>
      </label>
      <label>
        <span>Trials per level</span>
        <input name="trials" inputMode="numeric" className="narrow" defaultValue={String(defaults.trials)} aria-invalid={error?.field === 'trials'} />
      </label>
      <label>
        <span>Call budget</span>
        <input name="maxCalls" inputMode="numeric" className="narrow" defaultValue={String(defaults.maxCalls)} aria-invalid={error?.field === 'maxCalls'} />
      </label>
      <label>
        <span>Cost cap (USD)</span>
        <input name="maxCost" inputMode="decimal" className="narrow" defaultValue={String(defaults.maxCostUsd)} aria-invalid={error?.field === 'maxCost'} />
      </label>
      <div className="limits-form-actions">
        <button type="submit" className="small" disabled={pending} data-testid="limits-start">
          {pending ? 'Starting…' : 'Start'}
        </button>
        <button type="button" className="small secondary" onClick={() => setOpen(false)} disabled={pending}>
          Cancel
        </button>
      </div>
      <p className="muted small limits-form-note">
        Each trial is a generated task with a checkable answer, sent with strict: false; the search stops at the first budget reached and keeps what it measured.
      </p>
      {error && !pending ? (
        <span className="field-error" data-testid="field-error" data-code={error.code} role="alert">
          <span className="code">{error.code}</span> {error.message}
        </span>
      ) : null}
    </form>
  );
}

/** What the measurements cost and under which settings, then every level measured per dimension. */
function MeasuredSummary({ dimensions, open }: { dimensions: DimensionView[]; open: boolean }) {
  const measured = dimensions.filter((d) => d.levels.length > 0);
  if (measured.length === 0) return null;
  const calls = measured.reduce((n, d) => n + d.calls, 0);
  const cost = measured.reduce((n, d) => n + d.costUsd, 0);
  const runs = [...new Set(measured.map((d) => d.runId).filter((r): r is string => r !== null))];
  const settings = [...new Set(measured.map((d) => `threshold ${pct(d.threshold)}, ${d.trials} trials a level`))];
  return (
    <details className="io limit-details" open={open}>
      <summary>
        Levels measured · {calls} calls · {fmtCost(cost)} · {settings.join('; ')}
      </summary>
      {runs.length ? (
        <p className="small limit-runs">
          {runs.length === 1 ? 'Limits run' : 'Limits runs'}{' '}
          {runs.map((r, i) => (
            <span key={r}>
              {i > 0 ? ', ' : null}
              <Link href={runHref(r)} className="mono">
                {shortId(r)}
              </Link>
            </span>
          ))}
        </p>
      ) : null}
      {measured.map((d) => (
        <div key={d.dimension} className="limit-dimension" data-testid="limit-dimension" data-dimension={d.dimension}>
          <h3>{TITLES[d.dimension]}</h3>
          <LevelStrip d={d} />
          <LevelTable d={d} />
        </div>
      ))}
    </details>
  );
}

function ModelLimits({
  m,
  role,
  probe,
  canStart,
  defaults,
  onStarted,
}: {
  m: ModelLimitsView;
  role: LimitsModel['role'];
  probe: ProbeView | undefined;
  canStart: boolean;
  defaults: ProbeDefaults;
  onStarted: () => void;
}) {
  const byDimension = new Map(m.dimensions.map((d) => [d.dimension, d]));
  const running = !!probe && !probe.done;
  return (
    <article className="limits-model" data-testid="limits-model" data-model={m.model} aria-label={`Structural limits of ${m.model}`}>
      <div className="limits-model-head">
        <ModelName model={m.model} />
        {role === 'fallback' ? <span className="tag">fallback</span> : null}
        {canStart && !running ? (
          <span className="push-right">
            <StartForm model={m.model} defaults={defaults} onStarted={onStarted} />
          </span>
        ) : null}
      </div>
      {probe ? <ProbeProgress p={probe} /> : null}
      {m.dimensions.length === 0 && !running ? (
        <p className="muted small" data-testid="limits-none">
          Not measured yet{canStart ? '' : ' — an editor can measure it here, or run aqven limits on the command line'}.
        </p>
      ) : (
        <>
          <div className="limit-cells">
            {DIMENSIONS.map((dim) => (
              <DimensionCell key={dim} dimension={dim} d={byDimension.get(dim)} />
            ))}
          </div>
          <MeasuredSummary dimensions={m.dimensions} open={running} />
        </>
      )}
    </article>
  );
}

export function ModelLimitsPanel({ models, initial, canStart, defaults }: { models: LimitsModel[]; initial: LimitsResponse; canStart: boolean; defaults: ProbeDefaults }) {
  const names = models.map((m) => m.model);
  const key = ['limits', ...names];
  const client = useQueryClient();
  // the action answers once the probe is registered, so the refetch sees it and polling goes on while it runs
  const { data = initial } = useQuery({
    queryKey: key,
    queryFn: () => getLimits(names),
    initialData: initial,
    refetchInterval: (q) => (live(q.state.data) ? POLL_MS : false),
  });
  const onStarted = () => void client.invalidateQueries({ queryKey: key });
  return (
    <div className="limits-panel" data-testid="limits-panel" data-live={live(data)}>
      {models.map(({ model, role }) => {
        const m = data.models.find((x) => x.model === model) ?? { model, dimensions: [] };
        const probe = data.probes.find((p) => p.model === model);
        return <ModelLimits key={model} m={m} role={role} probe={probe} canStart={canStart} defaults={defaults} onStarted={onStarted} />;
      })}
      <p className="muted small limits-note">
        A level holds when at least the threshold of its answers are valid on the first try (the 95% intervals are in the tables of the levels measured); answers cut off by
        max_tokens are counted apart. <span className="mono">aqven check</span> warns (W_SCHEMA_LIMIT) where a node&apos;s output schema asks for more than a model held.
      </p>
    </div>
  );
}
