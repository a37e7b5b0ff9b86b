// Durations in project files are strings like "500ms", "2s", "1.5s", "1m" (DESIGN: "Project files").

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
/** with days: a retention period ("90d") is counted in days, never a timeout */
const LONG_DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds, or null when the text is not a duration; days ("90d") only with `days`. */
export function parseDuration(text: string, opts: { days?: boolean } = {}): number | null {
  const m = (opts.days ? LONG_DURATION : DURATION).exec(text.trim());
  if (!m) return null;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}

export const DURATION_HINT = 'write a duration as a number and a unit: "500ms", "2s", "1.5s" or "1m"';

export const RETENTION_HINT = 'write how long runs are kept as a number and a unit: "90d", "30d", "12h"';

/** Milliseconds as the shortest duration string that states them: 86400000 → "24h", 1500 → "1.5s". */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && Number.isInteger((ms / size) * 1000)) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
