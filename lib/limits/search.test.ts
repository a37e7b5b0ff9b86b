// The search over levels: doubling from the start until a level fails, then halving the gap, so a
// model's limit is found as neighbours (last held, first failed) in few levels; a resumed search
// goes on from the stored levels; a level nobody could judge decides nothing.
import { describe, expect, it } from 'vitest';
import type { LimitLevel } from '@/lib/shared/limits-types';
import { levelHeld } from '@/lib/shared/limits-types';
import { searchState } from './search';

const range = { start: 4, max: 64 };
const lvl = (level: number, valid: number, extra: Partial<LimitLevel> = {}): LimitLevel => ({
  level,
  trials: 5,
  firstTryValid: valid,
  afterRepairValid: valid,
  truncated: 0,
  calls: 5,
  ...extra,
});

/** Runs the search against a model that holds up to `limit`, returning the levels in the order measured. */
function search(limit: number, r = range): { levels: number[]; lastHeld: number | null; firstFailed: number | null } {
  const levels: LimitLevel[] = [];
  for (let guard = 0; guard < 50; guard++) {
    const s = searchState(levels, 0.9, r);
    if (s.next === null) return { levels: levels.map((l) => l.level), lastHeld: s.lastHeld, firstFailed: s.firstFailed };
    levels.push(lvl(s.next, s.next <= limit ? 5 : 0));
  }
  throw new Error('the search did not end');
}

describe('the limits search', () => {
  it.each([1, 3, 4, 5, 6, 7, 12, 33, 63])('finds a limit of %i as neighbours, in at most 2·log2(max) levels', (limit) => {
    const r = search(limit);
    expect([r.lastHeld, r.firstFailed]).toEqual([limit, limit + 1]);
    expect(r.levels.length).toBeLessThanOrEqual(2 * Math.log2(64));
  });

  it('doubles, then bisects: a limit of 5 from start 4 measures 4, 8, 6, 5', () => {
    expect(search(5).levels).toEqual([4, 8, 6, 5]);
  });

  it('ends at the top of the range when every level holds, with no failure found', () => {
    const r = search(1000);
    expect(r).toEqual({ levels: [4, 8, 16, 32, 64], lastHeld: 64, firstFailed: null });
  });

  it('a start level that fails bisects down to level 1; a model that fails at 1 held nothing', () => {
    expect(search(0)).toEqual({ levels: [4, 2, 1], lastHeld: null, firstFailed: 1 });
    expect(search(2).levels).toEqual([4, 2, 3]);
  });

  it('resumes from stored levels in any order: only the missing levels are measured', () => {
    const done = [lvl(8, 0), lvl(4, 5)];
    expect(searchState(done, 0.9, range)).toEqual({ lastHeld: 4, firstFailed: 8, next: 6 });
  });

  it('reads a hold above a failure (noise) below the failure', () => {
    expect(searchState([lvl(4, 5), lvl(8, 2), lvl(16, 5)], 0.9, range)).toMatchObject({ lastHeld: 4, firstFailed: 8, next: 6 });
  });

  it('judges a level over its answered trials: truncations and errors are out of the rate; none answered decides nothing', () => {
    expect(levelHeld(lvl(8, 3, { truncated: 1, errors: 1 }), 0.9)).toBe(true);
    expect(levelHeld(lvl(8, 4), 0.9)).toBe(false);
    expect(levelHeld(lvl(8, 4), 0.8)).toBe(true);
    expect(levelHeld(lvl(8, 0, { truncated: 3, errors: 2 }), 0.9)).toBeNull();
    // an undecided level neither holds nor fails: it is the next level again, which the probe must not loop on
    expect(searchState([lvl(4, 0, { truncated: 5 })], 0.9, range)).toEqual({ lastHeld: null, firstFailed: null, next: 4 });
  });
});
