// A span of time in the words a person skims: "40 s", "12 min", "5 h", "3 d" — rounded down, so a
// span never reads longer than it was. The failure groups' "ago" and the alerts' lines share it.

const HOUR = 3_600_000;

export function fmtSpan(ms: number): string {
  const t = Math.max(0, ms);
  if (t < 60_000) return `${Math.floor(t / 1000)} s`;
  if (t < HOUR) return `${Math.floor(t / 60_000)} min`;
  if (t < 48 * HOUR) return `${Math.floor(t / HOUR)} h`;
  return `${Math.floor(t / (24 * HOUR))} d`;
}

/** "just now", "12 min ago", "5 h ago", "3 d ago": how long before `now` `at` was. */
export function fmtAgo(at: number, now: number): string {
  const ms = Math.max(0, now - at);
  return ms < 60_000 ? 'just now' : `${fmtSpan(ms)} ago`;
}
