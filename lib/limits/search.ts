// Where a model stops getting a shape right (DESIGN: CLI, `aqven limits`): the levels measured so
// far say which level to try next — doubling from the start level until one fails (or the top of
// the range holds), then halving the gap between the last level that held and the first that
// failed until they are neighbours. Pure: the probe measures, this decides; a resumed run hands in
// the stored levels and goes on where it stopped.
import { levelHeld, type LimitLevel } from '@/lib/shared/limits-types';

export interface SearchRange {
  start: number;
  max: number;
}

export interface SearchState {
  /** the largest level that held below `firstFailed`; null: none held */
  lastHeld: number | null;
  /** the smallest level that failed; null: none failed */
  firstFailed: number | null;
  /** the next level to measure; null: the search is over */
  next: number | null;
}

/**
 * The state of a search over `levels` (in any order; a level with no answered trial decides
 * nothing). A level that held above one that failed (noise) is read below the failure: the limit
 * is the first failure, the last hold is the largest level below it.
 */
export function searchState(levels: readonly LimitLevel[], threshold: number, range: SearchRange): SearchState {
  let firstFailed: number | null = null;
  for (const l of levels) if (levelHeld(l, threshold) === false && (firstFailed === null || l.level < firstFailed)) firstFailed = l.level;
  let lastHeld: number | null = null;
  for (const l of levels) if (levelHeld(l, threshold) === true && (firstFailed === null || l.level < firstFailed) && (lastHeld === null || l.level > lastHeld)) lastHeld = l.level;
  const measured = new Set(levels.filter((l) => levelHeld(l, threshold) !== null).map((l) => l.level));
  let next: number | null;
  if (firstFailed === null) {
    // still climbing: double the last hold, up to the top of the range
    if (lastHeld === null) next = range.start;
    else if (lastHeld >= range.max) next = null;
    else next = Math.min(range.max, Math.max(lastHeld * 2, lastHeld + 1));
  } else {
    const lo = lastHeld ?? 0;
    next = firstFailed - lo <= 1 ? null : Math.floor((lo + firstFailed) / 2);
  }
  // a level measured before but left undecided (noise below a failure) is not measured again
  if (next !== null && measured.has(next)) next = null;
  return { lastHeld, firstFailed, next };
}
