// The run list's filters as URL query parameters (shared by /api/runs and the /runs page).
import { z } from 'zod';
import { InvalidCursorError, decodeCursor, type RunFilters } from '@/db/queries';
import { ATTEMPT_CAUSES, RUN_KINDS } from '@/lib/shared/run-list-values';
import { RUN_STATUSES } from '@/lib/dashboard/run-status';

const flag = z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true');
const time = z.union([z.coerce.number().int().nonnegative(), z.iso.datetime().transform((s) => Date.parse(s))]);

/** Relative time ranges of the run list's "time range" filter (`range=1h`), kept relative so a
 * live list keeps sliding. */
export const RUN_RANGES = { '15m': 15 * 60_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
export type RunRange = keyof typeof RUN_RANGES;

/** The query parameters the run list understands, in the order its links write them. */
export const RUN_FILTER_KEYS = ['status', 'flow', 'agent', 'model', 'cause', 'retried', 'fell_back', 'kind', 'range', 'from', 'to', 'limit'] as const;

/** one sentence for every way a limit is wrong (zod's own, "expected number, received NaN", names no range) */
const LIMIT = { error: 'must be a whole number from 1 to 500' };

const schema = z.object({
  status: z.enum(RUN_STATUSES).optional(),
  flow: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  cause: z.enum(ATTEMPT_CAUSES).optional(),
  kind: z.enum(RUN_KINDS).optional(),
  retried: flag.optional(),
  fell_back: flag.optional(),
  from: time.optional(),
  to: time.optional(),
  range: z.enum(Object.keys(RUN_RANGES) as [RunRange, ...RunRange[]]).optional(),
  limit: z.coerce.number(LIMIT).int(LIMIT).min(1, LIMIT).max(500, LIMIT).optional(),
});

export type ParsedFilters = { ok: true; filters: RunFilters; limit?: number } | { ok: false; error: string };

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
  if (c && decodeCursor(c) === null) return { ok: false, error: `query parameter cursor: ${new InvalidCursorError(c).message}` };
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return { ok: false, error: `query parameter ${issue.path.join('.') || '?'}: ${issue.message}` };
  }
  const { limit, fell_back, range, ...rest } = r.data;
  const from = range ? Math.max(rest.from ?? 0, now - RUN_RANGES[range]) : rest.from;
  return { ok: true, filters: { ...rest, from, fellBack: fell_back }, limit };
}

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
