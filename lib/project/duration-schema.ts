// Durations in project files as zod schemas (DESIGN: Project files): a duration string → milliseconds,
// each bounded, because every duration ends up in a Node timer.
import { z } from 'zod';
import { DURATION_HINT, formatDuration, parseDuration } from './duration';
import { quote } from './limits';

const HOUR_MS = 3_600_000;

/**
 * The longest durations a project file may set: every duration ends up in a Node timer, which
 * fires at once past 2^31-1 ms (about 24.8 days).
 */
export const DURATION_MAX = {
  /** timeouts, budgets and deadlines (transport.*) */
  timeoutMs: 24 * HOUR_MS,
  /** waits between tries (on_rate_limit.*) */
  waitMs: HOUR_MS,
} as const;

/** A duration string ("500ms", "2s", "1m", "1h") → milliseconds, at most `maxMs`. */
export function durationUpTo(maxMs: number) {
  const meta = { description: `a duration: a number and ms, s, m or h ("500ms", "2s", "1m"), at most ${formatDuration(maxMs)}`, pattern: '^\\d+(\\.\\d+)?(ms|s|m|h)$' };
  return z
    .string()
    .meta(meta)
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: `"${quote(value)}" is not a duration`, params: { hint: DURATION_HINT } });
        return z.NEVER;
      }
      if (ms > maxMs) {
        ctx.addIssue({
          code: 'custom',
          message: `"${quote(value)}" is longer than ${formatDuration(maxMs)}, the longest allowed here`,
          params: { hint: `use a duration of at most ${formatDuration(maxMs)}` },
        });
        return z.NEVER;
      }
      return ms;
    });
}

/** Timeouts, budgets and deadlines: at most DURATION_MAX.timeoutMs (24h). */
export const durationSchema = durationUpTo(DURATION_MAX.timeoutMs);
/** Waits between tries: at most DURATION_MAX.waitMs (1h). */
export const waitSchema = durationUpTo(DURATION_MAX.waitMs);
