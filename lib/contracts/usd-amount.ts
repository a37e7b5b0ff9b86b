// A USD amount typed by a person ("0.50", "$2", " 2 "): a cost cap of a replay or a batch, the cost
// budget of a limits probe. One rule for every door that takes one: the forms' fields, `aqven
// replay --cap`, `aqven limits --max-cost`.
import { z } from 'zod';
import { FIELD } from './refusal';

/** An amount in USD above 0 and at most `max`, a leading `$` allowed; its messages name the value FIELD. */
export function usdAmount(max: number) {
  return z
    .string({ error: `${FIELD} must be an amount in USD above 0` })
    .trim()
    .min(1, `${FIELD} must be an amount in USD above 0`)
    .transform((s, ctx) => {
      const n = Number(s.replace(/^\$/, ''));
      if (!Number.isFinite(n) || n <= 0) {
        ctx.addIssue({ code: 'custom', message: `${FIELD} must be an amount in USD above 0, got "${s}"` });
        return z.NEVER;
      }
      if (n > max) {
        ctx.addIssue({ code: 'custom', message: `${FIELD} must be at most $${max.toLocaleString('en-US')}, got "${s}"` });
        return z.NEVER;
      }
      return n;
    });
}
