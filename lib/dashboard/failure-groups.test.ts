import { describe, expect, it } from 'vitest';
import { alertMark, codeOutcome, exampleHref, fmtAgo, fmtShare, readFailureWindow } from './failure-groups';
import { readRunAnchor } from './run-anchors';

describe('/failures view rules', () => {
  it('reads the window from the URL, the last day when it is missing or unknown', () => {
    expect(readFailureWindow('7d')).toBe('7d');
    expect(readFailureWindow(['30d', '7d'])).toBe('30d');
    for (const v of [undefined, '', '1y', 'constructor', '__proto__']) expect(readFailureWindow(v)).toBe('24h');
  });

  it('links an attempt group’s example to the failed attempt, a node group’s to the node, as the run page reads them', () => {
    const base = { runId: 'run-1', nodeRunId: 'n1', nodeId: 'draft-reply', startedAt: 0, routedAround: false };
    const attempt = exampleHref({ ...base, attemptSeq: 3 });
    expect(attempt).toBe('/runs/run-1#attempt-draft-reply-3');
    expect(readRunAnchor(attempt.split('#')[1]!)).toMatchObject({ nodeId: 'draft-reply', seq: 3 });
    expect(readRunAnchor(exampleHref(base).split('#')[1]!)).toMatchObject({ nodeId: 'draft-reply', seq: null });
  });

  it('colours causes as the timeline does, says shares and ages briefly', () => {
    expect(['provider_error', 'refusal', 'truncated', 'invalid_output', 'E_LIMIT'].map(codeOutcome)).toEqual(['error', 'refusal', 'truncated', 'invalid', null]);
    expect([0.0004, 0.004, 0.25, 1, null].map(fmtShare)).toEqual(['<0.1 %', '0.4 %', '25 %', '100 %', '—']);
    const now = 10 * 86_400_000;
    expect([now - 5_000, now - 12 * 60_000, now - 5 * 3_600_000, now - 3 * 86_400_000].map((t) => fmtAgo(t, now))).toEqual(['just now', '12 min ago', '5 h ago', '3 d ago']);
  });

  it('marks a group that alerted: when, and whether the webhook took it', () => {
    const now = 10 * 86_400_000;
    const firedAt = now - 12 * 60_000;
    expect(alertMark(undefined, now)).toBeNull();
    expect(alertMark({ firedAt, status: 'delivered', timesFired: 1, tries: 1 }, now)).toEqual({
      state: 'delivered',
      text: 'alerted 12 min ago',
      title: `the webhook took the alert fired at ${new Date(firedAt).toISOString()} (fired once in all)`,
    });
    expect(alertMark({ firedAt, status: 'failed', timesFired: 3, tries: 4 }, now)).toMatchObject({
      state: 'failed',
      text: 'alert not delivered 12 min ago',
      title: expect.stringContaining('after 4 tries (fired 3 times in all)'),
    });
    expect(alertMark({ firedAt: now - 5_000, status: 'fired', timesFired: 1, tries: 0 }, now)).toMatchObject({ state: 'fired', text: 'alerting since just now' });
  });
});
