// A group's failures per UTC day as a tiny bar chart (inline SVG, no chart library): one bar a
// day, the tallest day full height; each bar's tooltip says its day and count.
import type { FailureGroup } from '@/db/failure-queries';

const W = 112;
const H = 26;

export function Sparkline({ trend }: { trend: FailureGroup['trend'] }) {
  const max = Math.max(1, ...trend.map((d) => d.failures));
  const step = W / Math.max(1, trend.length);
  const bar = Math.max(1.5, step - 1.5);
  const total = trend.reduce((n, d) => n + d.failures, 0);
  const first = trend[0];
  const label = `${total} failure${total === 1 ? '' : 's'} over the ${trend.length} days from ${first ? new Date(first.day).toISOString().slice(0, 10) : '—'}`;
  return (
    <svg className="fg-spark" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid="failure-trend">
      <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="fg-spark-base" />
      {trend.map((d, i) => {
        const h = d.failures === 0 ? 0 : Math.max(2, Math.round((d.failures / max) * (H - 2)));
        return (
          <rect key={d.day} x={i * step + 0.75} y={H - 1 - h} width={bar} height={h} className="fg-spark-bar">
            <title>{`${new Date(d.day).toISOString().slice(0, 10)}: ${d.failures}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}
