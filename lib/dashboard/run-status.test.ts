import { describe, expect, it } from 'vitest';
import { isLiveRun, RUN_STATUS_NOTES, RUN_STATUSES, runWithoutNodes } from './run-status';

describe('run statuses on the dashboard', () => {
  it('keeps following a queued or running run, and stops at every final status', () => {
    expect(RUN_STATUSES.filter(isLiveRun)).toEqual(['queued', 'running']);
    expect(RUN_STATUSES.filter((s) => !isLiveRun(s))).toEqual(['succeeded', 'failed', 'interrupted', 'cancelled']);
  });

  it('says a queued run without nodes waits for a worker, and has a note for every status', () => {
    expect(runWithoutNodes('queued')).toMatch(/waiting for a worker/);
    expect(runWithoutNodes('cancelled')).toMatch(/^Cancelled/);
    for (const s of RUN_STATUSES) expect(RUN_STATUS_NOTES[s]).toBeTruthy();
  });
});
