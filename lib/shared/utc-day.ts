// The UTC day, the one home of its arithmetic: the daily statistics' `day` keys, a spend budget's
// day, the date a structural limit was measured on.

export const DAY_MS = 86_400_000;

/** the start (ms) of the UTC day of `ms` */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** YYYY-MM-DD of `ms`, UTC */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
