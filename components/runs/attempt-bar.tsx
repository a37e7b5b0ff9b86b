// One attempt on the timeline: placed by its start and end, coloured by outcome; its transport
// tries inside, and the waits between them (retry-after, rate-limit pauses) drawn as gaps.
import { attemptSegments, outcomeKey, place, type AttemptFacts, type TimeAxis } from '@/lib/dashboard/run-view';
import { fmtMs } from '@/components/ui/format';

export function AttemptBar({ nodeId, attempt: a, axis, now }: { nodeId: string; attempt: AttemptFacts; axis: TimeAxis; now: number }) {
  const end = a.finishedAt ?? now;
  const key = outcomeKey(a);
  const pos = place(axis, a.startedAt, end);
  const span = Math.max(end - a.startedAt, 1);
  const segments = attemptSegments(a, now).filter((s) => s.kind !== 'try');
  const title = [
    `#${a.seq} ${a.model}`,
    a.outcome ? `${key === 'invalid' ? 'ok, invalid output' : a.outcome}${a.finishReason ? ` (${a.finishReason})` : ''}` : a.finishedAt == null ? 'in flight' : 'unfinished',
    a.cause ? `cause ${a.cause}` : null,
    a.action && a.action !== 'none' ? `then ${a.action}` : null,
    fmtMs(end - a.startedAt),
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <a
      href={`#attempt-${nodeId}-${a.seq}`}
      className={`attempt-bar o-${key}${a.discarded ? ' dropped' : ''}`}
      data-testid="attempt-bar"
      data-seq={a.seq}
      data-outcome={a.outcome ?? 'pending'}
      data-cause={a.cause ?? ''}
      data-action={a.action ?? 'none'}
      style={{ left: `${pos.left}%`, width: `${pos.width}%` }}
      title={title}
      aria-label={title}
    >
      {segments.map((s, i) => {
        const left = ((s.start - a.startedAt) / span) * 100;
        const width = ((s.end - s.start) / span) * 100;
        return <span key={i} className={`seg seg-${s.kind}`} style={{ left: `${left.toFixed(2)}%`, width: `${width.toFixed(2)}%` }} title={s.label} />;
      })}
      <span className="bar-label">{a.action && a.action !== 'none' ? `${a.seq} → ${a.action}` : a.seq}</span>
    </a>
  );
}
