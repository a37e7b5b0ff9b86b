'use client';
// One attempt on the timeline: placed by its start and end, coloured by outcome; its transport
// tries inside, and the waits between them (retry-after, rate-limit pauses) drawn as gaps — the
// wait going on now included. Following a bar (click, or Enter when focused) opens and focuses
// the attempt's details.
import type { MouseEvent } from 'react';
import { isWaiting } from '@/lib/dashboard/live-wait';
import { attemptAnchor } from '@/lib/dashboard/run-anchors';
import { attemptSegments, outcomeKey, place, type AttemptFacts, type Segment, type TimeAxis } from '@/lib/dashboard/run-view';
import { fmtMs } from '@/components/ui/format';
import { useLiveWait } from './run-live';

const FOCUS_WAIT_MS = 3000;

/** Focuses the element with id `anchor` once it exists (its node or group may be opening). */
function focusWhenShown(anchor: string) {
  const until = performance.now() + FOCUS_WAIT_MS;
  const seek = () => {
    const el = document.getElementById(anchor);
    if (el) el.focus({ preventScroll: true });
    else if (performance.now() < until) requestAnimationFrame(seek);
  };
  requestAnimationFrame(seek);
}

export function AttemptBar({ nodeId, attempt: a, axis, now }: { nodeId: string; attempt: AttemptFacts; axis: TimeAxis; now: number }) {
  const end = a.finishedAt ?? now;
  const key = outcomeKey(a);
  const pos = place(axis, a.startedAt, end);
  const span = Math.max(end - a.startedAt, 1);
  const wait = useLiveWait(a, now);
  const segments: Segment[] = attemptSegments(a, now).filter((s) => s.kind !== 'try');
  // the wait going on now (a try is stored only once it ends): from the last try's end to now
  if (isWaiting(wait) && now > wait.from) {
    const rate = wait.kind === 'countdown' && wait.why === 'rate-limit';
    segments.push({ kind: rate ? 'pause' : 'wait', start: wait.from, end: now, label: rate ? 'rate-limit pause, going on' : 'wait before retry, going on' });
  }
  const title = [
    `#${a.seq} ${a.model}`,
    a.outcome ? `${key === 'invalid' ? 'ok, invalid output' : a.outcome}${a.finishReason ? ` (${a.finishReason})` : ''}` : a.finishedAt == null ? 'in flight' : 'unfinished',
    a.cause ? `cause ${a.cause}` : null,
    a.action && a.action !== 'none' ? `then ${a.action}` : null,
    fmtMs(end - a.startedAt),
  ]
    .filter(Boolean)
    .join(' · ');
  const anchor = attemptAnchor(nodeId, a.seq);
  const onFollow = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return; // a new tab or window
    focusWhenShown(anchor);
  };
  return (
    <a
      href={`#${anchor}`}
      className={`attempt-bar o-${key}${a.discarded ? ' dropped' : ''}`}
      data-testid="attempt-bar"
      data-seq={a.seq}
      data-outcome={a.outcome ?? 'pending'}
      data-cause={a.cause ?? ''}
      data-action={a.action ?? 'none'}
      style={{ left: `${pos.left}%`, width: `${pos.width}%` }}
      title={title}
      aria-label={`${title}: show its details`}
      onClick={onFollow}
    >
      {segments.map((s, i) => {
        const left = ((s.start - a.startedAt) / span) * 100;
        const width = ((s.end - s.start) / span) * 100;
        return <span key={i} className={`seg seg-${s.kind}`} style={{ left: `${left.toFixed(2)}%`, width: `${width.toFixed(2)}%` }} title={s.label} />;
      })}
      {/* the label gives up its words before it is cut: container queries on the bar's width (globals.css) */}
      <span className="bar-label" aria-hidden>
        <span className="bar-seq">{a.seq}</span>
        {a.action && a.action !== 'none' ? <span className="bar-action"> → {a.action}</span> : null}
      </span>
    </a>
  );
}
