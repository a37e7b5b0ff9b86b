// A run named by its id or a prefix of it (DESIGN: The dashboard, "Short run ids and search"): the
// run page, GET /api/runs/:id, `aqven show` and `aqven cancel` take the 8-character short id as
// well as the full one. A prefix naming several runs is answered with them, never with a guess.
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { runIdPrefix } from '@/lib/shared/short-id';
import type { Db, RunStatus } from './types';

/** A run a prefix names, as a list of choices shows it. */
export interface RunIdMatch {
  id: string;
  flow: string;
  status: RunStatus;
  /** flow, or a replay or limits run */
  kind: 'flow' | 'replay' | 'limits';
  startedAt: number;
}

export type RunIdResolution =
  | { kind: 'found'; id: string }
  /** newest first, at most RUN_ID_MATCHES_MAX; `more`: other runs match too */
  | { kind: 'ambiguous'; matches: RunIdMatch[]; more: boolean }
  | { kind: 'none' };

/** the most runs an ambiguous prefix lists */
export const RUN_ID_MATCHES_MAX = 10;

/**
 * The run `idOrPrefix` names: the run with exactly that id, else the only run whose id starts with
 * it (hex and dashes, at least 4 characters: RUN_ID_PREFIX_MIN), else the runs it could mean.
 */
export async function resolveRunId(db: Db, idOrPrefix: string): Promise<RunIdResolution> {
  const { runs } = db.t;
  const exact = await db.q.select({ id: runs.id }).from(runs).where(eq(runs.id, idOrPrefix)).limit(1);
  if (exact.length) return { kind: 'found', id: exact[0]!.id };
  const prefix = runIdPrefix(idOrPrefix);
  if (!prefix) return { kind: 'none' };
  const found = await runsByIdPrefix(db, prefix, RUN_ID_MATCHES_MAX + 1);
  if (found.length === 0) return { kind: 'none' };
  if (found.length === 1) return { kind: 'found', id: found[0]!.id };
  return { kind: 'ambiguous', matches: found.slice(0, RUN_ID_MATCHES_MAX), more: found.length > RUN_ID_MATCHES_MAX };
}

/**
 * The runs whose id starts with `prefix` (as runIdPrefix gives it), newest first, at most `limit`.
 * The primary key's index is read as a range; the exact test is on the characters themselves.
 * A query builder (awaited for the rows): the tests read its plan.
 */
export function runsByIdPrefix(db: Db, prefix: string, limit: number) {
  const { runs } = db.t;
  const { lo, hi } = prefixRange(prefix);
  const where: SQL[] = [gte(runs.id, lo), sql`substr(${runs.id}, 1, ${prefix.length}) = ${prefix}`];
  if (hi !== null) where.push(lt(runs.id, hi));
  return db.q
    .select({ id: runs.id, flow: runs.flow, status: runs.status, kind: runs.kind, startedAt: runs.startedAt })
    .from(runs)
    .where(and(...where))
    .orderBy(desc(runs.startedAt), desc(runs.id))
    .limit(limit);
}

const HEX = '0123456789abcdef';

/**
 * Bounds [lo, hi) holding every id that starts with `prefix`, under any collation, not only a
 * bytewise one: a PostgreSQL database made with a linguistic locale (en_US…) compares its text
 * keys ignoring dashes and case first, so the range is taken on the hex digits before the first
 * dash, and its end is those digits "plus one" (`abcf` → `abd`); hi is null past `ffff…`.
 * Every collation orders 0-9 before a-f and a string after its own prefixes.
 */
export function prefixRange(prefix: string): { lo: string; hi: string | null } {
  const head = prefix.split('-', 1)[0]!;
  let i = head.length - 1;
  while (i >= 0 && head[i] === 'f') i--;
  const hi = i < 0 ? null : head.slice(0, i) + HEX[HEX.indexOf(head[i]!) + 1];
  return { lo: head, hi };
}
