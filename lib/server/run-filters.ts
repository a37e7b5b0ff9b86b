// The run list's filters as URL query parameters (shared by /api/runs and the /runs page).
import { z } from 'zod';
import type { RunFilters } from '@/db/queries';

const flag = z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true');
const time = z.union([z.coerce.number().int().nonnegative(), z.iso.datetime().transform((s) => Date.parse(s))]);

const schema = z.object({
  status: z.enum(['running', 'succeeded', 'failed', 'interrupted']).optional(),
  flow: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  cause: z.enum(['provider_error', 'refusal', 'truncated', 'invalid_output']).optional(),
  retried: flag.optional(),
  fell_back: flag.optional(),
  from: time.optional(),
  to: time.optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

export type ParsedFilters = { ok: true; filters: RunFilters; limit?: number } | { ok: false; error: string };

export function parseRunFilters(params: URLSearchParams | Record<string, string | string[] | undefined>): ParsedFilters {
  const raw: Record<string, string> = {};
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  for (const [k, v] of entries) {
    const val = Array.isArray(v) ? v[0] : v;
    if (val !== undefined && val !== '' && k !== 'cursor') raw[k] = val;
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return { ok: false, error: `query parameter ${issue.path.join('.') || '?'}: ${issue.message}` };
  }
  const { limit, fell_back, ...rest } = r.data;
  return { ok: true, filters: { ...rest, fellBack: fell_back }, limit };
}
