import { describe, expect, it } from 'vitest';
import type { AgentTimeline } from '@/db/agent-timeline';
import { dayLabel, markLabel, timelineView } from './agent-timeline';
import { isDropped } from './run-view';

const DAY = 86_400_000;
const D0 = Date.UTC(2026, 10, 1);

const timeline = (over: Partial<AgentTimeline> = {}): AgentTimeline => ({ from: D0, to: D0 + 3 * DAY, rows: [], revisions: [], ...over });

describe('timelineView', () => {
  it('has a point for every day of the window, empty days at zero', () => {
    const v = timelineView(timeline({ rows: [{ day: D0 + DAY, outcome: 'ok', cause: '', action: 'none', attempts: 4, costUsd: 0.01 }] }));
    expect(v.days.map((d) => [d.day, d.attempts])).toEqual([
      [D0, 0],
      [D0 + DAY, 4],
      [D0 + 2 * DAY, 0],
    ]);
    expect(v.days[0].counts).toEqual({ ok: 0, invalid: 0, error: 0, refusal: 0, truncated: 0 });
  });

  it('counts an ok answer that failed its checks as invalid, not ok', () => {
    const v = timelineView(
      timeline({
        rows: [
          { day: D0, outcome: 'ok', cause: '', action: 'none', attempts: 6, costUsd: 0 },
          { day: D0, outcome: 'ok', cause: 'invalid_output', action: 'repair', attempts: 2, costUsd: 0 },
          { day: D0, outcome: 'refusal', cause: 'refusal', action: 'none', attempts: 1, costUsd: 0 },
        ],
      }),
    );
    expect(v.days[0].counts).toEqual({ ok: 6, invalid: 2, error: 0, refusal: 1, truncated: 0 });
    expect(v.totals.counts.invalid).toBe(2);
  });

  // the run header's rule (isDropped over the attempt's discarded flag and action), row by row
  it.each([
    ['', 'none', false],
    ['provider_error', 'retry', true],
    ['invalid_output', 'repair', true],
    ['truncated', 'fallback', true],
    ['refusal', 'none', true],
  ])('an attempt with cause "%s" and action %s is dropped: %s', (cause, action, want) => {
    const v = timelineView(timeline({ rows: [{ day: D0, outcome: cause === '' || cause === 'invalid_output' ? 'ok' : 'error', cause, action, attempts: 2, costUsd: 0.25 }] }));
    expect(v.days[0].droppedAttempts).toBe(want ? 2 : 0);
    expect(v.days[0].droppedCostUsd).toBe(want ? 0.25 : 0);
    expect(isDropped({ discarded: cause !== '', action: action as never })).toBe(want);
  });

  it('marks each day with a policy save once, naming every revision of that day, and leaves out saves outside the window', () => {
    const v = timelineView(
      timeline({
        revisions: [
          { revision: 1, createdAt: D0 - 5, author: null },
          { revision: 2, createdAt: D0 + DAY + 10, author: 'ana' },
          { revision: 3, createdAt: D0 + 2 * DAY - 1, author: 'bo' },
        ],
      }),
    );
    expect(v.marks.map((m) => [m.day, markLabel(m)])).toEqual([[D0 + DAY, 'r2, r3']]);
    // a busy day stays one short label
    const busy = timelineView(timeline({ revisions: [4, 5, 6, 7].map((revision) => ({ revision, createdAt: D0 + revision, author: null })) }));
    expect(markLabel(busy.marks[0])).toBe('r4–r7');
  });

  it('names a UTC day the same way everywhere', () => {
    expect(dayLabel(D0)).toBe('Nov 1');
  });
});
