/** True when dist/cli must be rebuilt: no build, or one of its inputs is newer than it or gone. */
export function isCliStale(root: string): boolean;
