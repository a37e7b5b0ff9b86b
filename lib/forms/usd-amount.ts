// A cost cap typed into a form ("0.50", "$2"): one rule for every form that takes one.
import { z } from 'zod';

/** A USD amount above 0 and at most `max`; `example` is shown in the message for a bad value. */
export function usdCapField(max: number, example: string) {
  return z
    .string({ error: 'set a cost cap in USD' })
    .trim()
    .min(1, 'set a cost cap in USD')
    .transform((s, ctx) => {
      const n = Number(s.replace(/^\$/, ''));
      if (!Number.isFinite(n) || n <= 0) {
        ctx.addIssue({ code: 'custom', message: `the cost cap is an amount in USD above 0, e.g. ${example}` });
        return z.NEVER;
      }
      if (n > max) {
        ctx.addIssue({ code: 'custom', message: `the cost cap is at most $${max}` });
        return z.NEVER;
      }
      return n;
    });
}
