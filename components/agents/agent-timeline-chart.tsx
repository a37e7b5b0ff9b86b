// One agent over its last days, for /agents/[name]: two figures (outcome shares, spend on dropped
// attempts), each with a caption that says what the picture shows in a sentence and the figures
// by day in a table, and the policy saves marked on both.
import { fmtCost } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { dayLabel, markLabel, TIMELINE_OUTCOMES, type TimelineDay, type TimelineView } from '@/lib/dashboard/agent-timeline';
import { DroppedSpendChart, OutcomeShareChart } from './timeline-chart';

const pct = (n: number, of: number) => (of ? `${Math.round((n / of) * 100)}%` : '—');
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const NAME = { ok: 'ok', invalid: 'invalid output', error: 'error', refusal: 'refusal', truncated: 'truncated' } as const;

function savesSentence(view: TimelineView): string {
  const revisions = view.marks.flatMap((m) => m.revisions);
  if (!revisions.length) return 'The policy was not saved in this window.';
  return `The policy was saved ${plural(revisions.length, 'time')} (${view.marks.map((m) => `${markLabel(m)} on ${dayLabel(m.day)}`).join('; ')}), marked by dashed lines.`;
}

function outcomeSentence(view: TimelineView, days: number): string {
  const t = view.totals;
  const parts = TIMELINE_OUTCOMES.filter((k) => t.counts[k]).map((k) => `${pct(t.counts[k], t.attempts)} ${NAME[k]}`);
  return `${plural(t.attempts, 'attempt')} over the last ${days} days: ${parts.join(', ')}.`;
}

function spendSentence(view: TimelineView): string {
  const t = view.totals;
  if (!t.droppedAttempts) return `No attempt was dropped; ${fmtCost(t.costUsd)} spent in all.`;
  return `${fmtCost(t.droppedCostUsd)} of ${fmtCost(t.costUsd)} (${pct(t.droppedCostUsd, t.costUsd)}) went to ${plural(t.droppedAttempts, 'attempt')} whose answer was not kept (retried, repaired, fell back, or failed the node).`;
}

/** The days with attempts or a save, as a table: the picture's figures in words. */
function DayTable({ view, kind }: { view: TimelineView; kind: 'outcomes' | 'spend' }) {
  const saved = new Map(view.marks.map((m) => [m.day, markLabel(m)]));
  const rows = view.days.filter((d) => d.attempts || saved.has(d.day)).reverse();
  const cells = (d: TimelineDay) =>
    kind === 'outcomes'
      ? [String(d.attempts), ...TIMELINE_OUTCOMES.map((k) => (d.counts[k] ? `${d.counts[k]} (${pct(d.counts[k], d.attempts)})` : '0'))]
      : [fmtCost(d.droppedCostUsd), String(d.droppedAttempts), fmtCost(d.costUsd)];
  const heads = kind === 'outcomes' ? ['attempts', ...TIMELINE_OUTCOMES.map((k) => NAME[k])] : ['dropped', 'dropped attempts', 'total'];
  return (
    <details className="chart-figures">
      <summary>Figures by day</summary>
      <div className="table-scroll">
        <table className="mini">
          <thead>
            <tr>
              <th scope="col">day (UTC)</th>
              {heads.map((h) => (
                <th key={h} scope="col" className="num">
                  {h}
                </th>
              ))}
              <th scope="col">saved</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.day}>
                <th scope="row">{dayLabel(d.day)}</th>
                {cells(d).map((c, i) => (
                  <td key={i} className="num mono">
                    {c}
                  </td>
                ))}
                <td className="mono">{saved.get(d.day) ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

export function AgentTimelineCharts({ view, days }: { view: TimelineView; days: number }) {
  const saves = savesSentence(view);
  if (!view.totals.attempts) {
    return (
      <section className="agent-charts" aria-labelledby="agent-charts-h" data-testid="agent-charts">
        <h2 id="agent-charts-h">Over the last {days} days</h2>
        <p className="muted">
          No attempt of this agent in a flow run in the last {days} days. {saves}
        </p>
        {view.marks.length ? (
          <ul className="chart-saves">
            {view.marks
              .flatMap((m) => m.revisions)
              .map((r) => (
                <li key={r.revision}>
                  r{r.revision} · <LocalTime ms={r.createdAt} withDate />
                </li>
              ))}
          </ul>
        ) : null}
      </section>
    );
  }
  return (
    <section className="agent-charts" aria-labelledby="agent-charts-h" data-testid="agent-charts">
      <h2 id="agent-charts-h">Over the last {days} days</h2>
      <figure className="chart" data-testid="outcome-share-chart" data-marks={view.marks.length}>
        <figcaption>
          <strong>Outcome shares per day</strong> <span className="muted small">(UTC days, flow runs)</span>
          <p className="small">
            {outcomeSentence(view, days)} {saves}
          </p>
        </figcaption>
        {/* the caption and the table say what the picture shows */}
        <div className="chart-box" aria-hidden>
          <OutcomeShareChart days={view.days} marks={view.marks} />
        </div>
        <DayTable view={view} kind="outcomes" />
      </figure>
      <figure className="chart" data-testid="dropped-spend-chart" data-marks={view.marks.length}>
        <figcaption>
          <strong>Spend on dropped attempts per day</strong>
          <p className="small">{spendSentence(view)}</p>
        </figcaption>
        <div className="chart-box" aria-hidden>
          <DroppedSpendChart days={view.days} marks={view.marks} />
        </div>
        <DayTable view={view} kind="spend" />
      </figure>
    </section>
  );
}
