// The run list's filters as URL query parameters (shared by /api/runs, the /runs page and `aqven runs`,
// whose options carry the same names).
import { z } from 'zod';
import { InvalidCursorError, decodeCursor, type RunFilters } from '@/db/queries';
import { ATTEMPT_CAUSES, RUN_KINDS } from '@/lib/shared/run-list-values';
import { RUN_STATUSES } from '@/lib/dashboard/run-status';

// each refusal in words that name what is accepted (zod's own, "Invalid input", name nothing)
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });
const flag = oneOf(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true');
const TIME = { error: 'must be an ISO 8601 time with its zone (2026-12-01T09:00:00Z) or epoch milliseconds' };
const time = z.union([z.coerce.number().int().nonnegative(), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))], TIME);

/** Relative time ranges of the run list's "time range" filter (`range=1h`), kept relative so a
 * live list keeps sliding. */
export const RUN_RANGES = { '15m': 15 * 60_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
export type RunRange = keyof typeof RUN_RANGES;

/** The query parameters the run list understands, in the order its links write them. */
export const RUN_FILTER_KEYS = ['status', 'flow', 'agent', 'model', 'cause', 'retried', 'fell_back', 'kind', 'range', 'from', 'to', 'limit'] as const;

/** one sentence for every way a limit is wrong (zod's own, "expected number, received NaN", names no range) */
const LIMIT = { error: 'must be a whole number from 1 to 500' };

const schema = z.object({
  status: oneOf(RUN_STATUSES).optional(),
  flow: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  cause: oneOf(ATTEMPT_CAUSES).optional(),
  kind: oneOf(RUN_KINDS).optional(),
  retried: flag.optional(),
  fell_back: flag.optional(),
  from: time.optional(),
  to: time.optional(),
  range: oneOf(Object.keys(RUN_RANGES) as [RunRange, ...RunRange[]]).optional(),
  limit: z.coerce.number(LIMIT).int(LIMIT).min(1, LIMIT).max(500, LIMIT).optional(),
});

/** `error` names the query parameter; `param` and `reason` let a caller that names it otherwise (a CLI option) say the same */
export type ParsedFilters = { ok: true; filters: RunFilters; limit?: number } | { ok: false; error: string; param: string; reason: string };

export function parseRunFilters(params: URLSearchParams | Record<string, string | string[] | undefined>, now = Date.now()): ParsedFilters {
  const raw: Record<string, string> = {};
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  for (const [k, v] of entries) {
    const val = Array.isArray(v) ? v[0] : v;
    if (val !== undefined && val !== '' && k !== 'cursor') raw[k] = val;
  }
  const cursor = entries.find(([k]) => k === 'cursor')?.[1];
  const c = Array.isArray(cursor) ? cursor[0] : cursor;
  // a cursor no page handed out (mistyped, cut short): said, not silently read as "the first page"
  if (c && decodeCursor(c) === null) return refused('cursor', new InvalidCursorError(c).message);
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return refused(issue.path.join('.') || '?', issue.message);
  }
  const { limit, fell_back, range, ...rest } = r.data;
  const from = range ? Math.max(rest.from ?? 0, now - RUN_RANGES[range]) : rest.from;
  return { ok: true, filters: { ...rest, from, fellBack: fell_back }, limit };
}

const refused = (param: string, reason: string): ParsedFilters => ({ ok: false, error: `query parameter ${param}: ${reason}`, param, reason });

/** The run list's filter parameters (no cursor) as a query string, empty values dropped. */
export function runFilterQuery(params: URLSearchParams | Record<string, string | string[] | undefined>): string {
  const get = (k: string) => {
    const v = params instanceof URLSearchParams ? params.get(k) : params[k];
    return Array.isArray(v) ? v[0] : v;
  };
  const out = new URLSearchParams();
  for (const k of RUN_FILTER_KEYS) {
    const v = get(k);
    if (v) out.set(k, v);
  }
  return out.toString();
}
