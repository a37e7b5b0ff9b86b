'use client';
// The two pictures of one agent over its last days (recharts, drawn in the browser): what share of
// its attempts ended ok, invalid, error, refusal or truncated, and what its dropped attempts cost —
// each with a dashed mark on the days its policy was saved. The figures themselves are also in a
// table beside each chart (agent-timeline-chart.tsx), for readers who can't see the picture: the
// picture is hidden from assistive technology and takes no keyboard focus (no accessibility layer).
import { Bar, BarChart, CartesianGrid, Legend, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import { fmtCost } from '@/components/ui/format';
import { dayLabel, markLabel, TIMELINE_OUTCOMES, type TimelineDay, type TimelineMark, type TimelineOutcome } from '@/lib/dashboard/agent-timeline';

/** the outcome colours of globals.css (an SVG fill attribute takes no CSS variable) */
const COLOUR: Record<TimelineOutcome, string> = { ok: '#2f9e5b', invalid: '#c2692d', error: '#d64545', refusal: '#8a5cd6', truncated: '#d9902f' };
const NAME: Record<TimelineOutcome, string> = { ok: 'ok', invalid: 'invalid output', error: 'error', refusal: 'refusal', truncated: 'truncated' };
const INK = '#1c1d1f';
const MUTED = '#6b6f76';
const LINE = '#e3e3df';
const KEPT = '#bfc3c9';

const HEIGHT = 230;
/** room above the plot and right of it for a mark's label ("r3–r9") on the first or last day */
const MARGIN = { top: 18, right: 24, bottom: 0, left: 0 };
const axisTick = { fontSize: 11, fill: MUTED };
const pct = (x: number) => `${Math.round(x * 100)}%`;
/** an axis tick needs two digits, not fmtCost's three: $0.008, $0.25, $3 */
const tickCost = (v: number) => (v > 0 && v < 1 ? `$${Number(v.toPrecision(2))}` : fmtCost(v));

/** legend names in ink (recharts colours them like their bars: a light grey would be unreadable) */
const legendText = (value: string) => <span style={{ color: INK }}>{value}</span>;

function Marks({ marks }: { marks: TimelineMark[] }) {
  return marks.map((m) => (
    <ReferenceLine
      key={m.day}
      x={dayLabel(m.day)}
      stroke={INK}
      strokeDasharray="4 3"
      ifOverflow="extendDomain"
      label={{ value: markLabel(m), position: 'top', fontSize: 11, fill: INK, className: 'revision-mark' }}
    />
  ));
}

/** thin the day labels: about one per 48 px, first and last kept */
const xAxis = <XAxis dataKey="label" tick={axisTick} tickLine={false} axisLine={{ stroke: LINE }} interval="preserveStartEnd" minTickGap={14} />;

function saves(marks: TimelineMark[], day: number): string | null {
  const m = marks.find((x) => x.day === day);
  return m ? `policy saved: ${markLabel(m)}` : null;
}

/** what recharts hands a tooltip: the hovered day's point is each entry's payload */
interface TipProps {
  active?: boolean;
  payload?: readonly { payload?: unknown }[];
  marks: TimelineMark[];
}

type Point = TimelineDay & { label: string } & Record<TimelineOutcome, number>;

function OutcomeTip({ active, payload, marks }: TipProps) {
  const p = payload?.[0]?.payload as Point | undefined;
  if (!active || !p) return null;
  const saved = saves(marks, p.day);
  return (
    <div className="chart-tip">
      <strong>{p.label}</strong> · {p.attempts} attempt{p.attempts === 1 ? '' : 's'}
      {p.attempts
        ? TIMELINE_OUTCOMES.filter((k) => p.counts[k]).map((k) => (
            <div key={k}>
              <span className="chart-swatch" style={{ background: COLOUR[k] }} /> {NAME[k]} {p.counts[k]} ({pct(p.counts[k] / p.attempts)})
            </div>
          ))
        : null}
      {saved ? <div className="chart-tip-save">{saved}</div> : null}
    </div>
  );
}

export function OutcomeShareChart({ days, marks }: { days: TimelineDay[]; marks: TimelineMark[] }) {
  // a day without attempts has no bar (its shares are not 0%)
  const data: Point[] = days.map((d) => ({ ...d, label: dayLabel(d.day), ...d.counts }));
  return (
    <BarChart accessibilityLayer={false} responsive style={{ width: '100%', height: HEIGHT }} data={data} stackOffset="expand" margin={MARGIN} barCategoryGap="12%">
      <CartesianGrid vertical={false} stroke={LINE} />
      {xAxis}
      <YAxis tickFormatter={pct} tick={axisTick} tickLine={false} axisLine={false} width={42} ticks={[0, 0.25, 0.5, 0.75, 1]} />
      <Tooltip content={(props) => <OutcomeTip {...props} marks={marks} />} cursor={{ fill: 'rgba(47, 111, 214, 0.08)' }} isAnimationActive={false} />
      <Legend wrapperStyle={{ fontSize: 12, lineHeight: '18px' }} iconSize={10} itemSorter={null} formatter={legendText} />
      {TIMELINE_OUTCOMES.map((k) => (
        <Bar key={k} dataKey={k} name={NAME[k]} stackId="o" fill={COLOUR[k]} isAnimationActive={false} />
      ))}
      {Marks({ marks })}
    </BarChart>
  );
}

type SpendPoint = TimelineDay & { label: string; dropped: number; kept: number };

function SpendTip({ active, payload, marks }: TipProps) {
  const p = payload?.[0]?.payload as SpendPoint | undefined;
  if (!active || !p) return null;
  const saved = saves(marks, p.day);
  return (
    <div className="chart-tip">
      <strong>{p.label}</strong>
      <div>
        <span className="chart-swatch" style={{ background: COLOUR.error }} /> dropped {fmtCost(p.droppedCostUsd)} · {p.droppedAttempts} attempt{p.droppedAttempts === 1 ? '' : 's'}
      </div>
      <div>
        <span className="chart-swatch" style={{ background: KEPT }} /> kept {fmtCost(p.kept)} · total {fmtCost(p.costUsd)}
      </div>
      {saved ? <div className="chart-tip-save">{saved}</div> : null}
    </div>
  );
}

export function DroppedSpendChart({ days, marks }: { days: TimelineDay[]; marks: TimelineMark[] }) {
  const data: SpendPoint[] = days.map((d) => ({ ...d, label: dayLabel(d.day), dropped: d.droppedCostUsd, kept: Math.max(0, d.costUsd - d.droppedCostUsd) }));
  return (
    <BarChart accessibilityLayer={false} responsive style={{ width: '100%', height: HEIGHT }} data={data} margin={MARGIN} barCategoryGap="12%">
      <CartesianGrid vertical={false} stroke={LINE} />
      {xAxis}
      {/* as wide as its longest tick: a day of fractions of a cent reads "$0.00045" */}
      <YAxis tickFormatter={tickCost} tick={axisTick} tickLine={false} axisLine={false} width="auto" />
      <Tooltip content={(props) => <SpendTip {...props} marks={marks} />} cursor={{ fill: 'rgba(47, 111, 214, 0.08)' }} isAnimationActive={false} />
      <Legend wrapperStyle={{ fontSize: 12, lineHeight: '18px' }} iconSize={10} itemSorter={null} formatter={legendText} />
      <Bar dataKey="dropped" name="spent on dropped attempts" stackId="s" fill={COLOUR.error} isAnimationActive={false} />
      <Bar dataKey="kept" name="spent on answers kept" stackId="s" fill={KEPT} isAnimationActive={false} />
      {Marks({ marks })}
    </BarChart>
  );
}
