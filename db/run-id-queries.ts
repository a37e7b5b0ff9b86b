// A run named by its id or a prefix of it (DESIGN: The dashboard, "Short run ids"): the run page,
// GET /api/runs/:id, `aqven show` and `aqven cancel` take the full id, a prefix of it (the short id
// runs made before ids were time-ordered were shown with), and a prefix of its last group (the
// short id: lib/shared/short-id.ts). A prefix naming several runs is answered with them, never with a guess.
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { isRunIdTailPrefix, runIdPrefix, RUN_ID_TAIL_START, shortRunIdSpan } from '@/lib/shared/short-id';
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
 * The run `idOrPrefix` names: the run with exactly that id, else the only run whose id, or whose
 * id's last group, starts with it (hex and dashes, at least 4 characters: RUN_ID_PREFIX_MIN), else
 * the runs it could mean.
 */
export async function resolveRunId(db: Db, idOrPrefix: string): Promise<RunIdResolution> {
  const { runs } = db.t;
  const exact = await db.q.select({ id: runs.id }).from(runs).where(eq(runs.id, idOrPrefix)).limit(1);
  if (exact.length) return { kind: 'found', id: exact[0]!.id };
  const prefix = runIdPrefix(idOrPrefix);
  if (!prefix) return { kind: 'none' };
  const found = await runsByIdOrShortId(db, prefix, RUN_ID_MATCHES_MAX + 1);
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

/**
 * The runs whose id starts with `prefix` (as runIdPrefix gives it), or whose id's last group does
 * (the short id: 4 to 12 hex digits), both newest first, at most `limit`.
 */
export async function runsByIdOrShortId(db: Db, prefix: string, limit: number): Promise<RunIdMatch[]> {
  const whole = await runsByIdPrefix(db, prefix, limit);
  // a 36-character id not shaped as a UUID is shown by its start (shortRunIdSpan): its tail names nothing
  const tail = isRunIdTailPrefix(prefix) ? (await runsByShortIdPrefix(db, prefix, limit)).filter((m) => shortRunIdSpan(m.id)[0] === RUN_ID_TAIL_START) : [];
  const byId = new Map<string, RunIdMatch>();
  for (const m of [...whole, ...tail]) byId.set(m.id, { ...m, startedAt: Number(m.startedAt) });
  // the newest `limit` of each side hold the newest `limit` of both
  return [...byId.values()].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, limit);
}

/**
 * The runs with a UUID-shaped id whose last group starts with `prefix` (4 to 12 hex digits),
 * newest first, at most `limit`. The index `runs_id_tail_idx` on `substr(id, 25)` is read as a
 * range — the query names exactly that expression, or neither dialect uses it; the exact test is
 * on the characters. A query builder (awaited for the rows): the tests read its plan.
 */
export function runsByShortIdPrefix(db: Db, prefix: string, limit: number) {
  const { runs } = db.t;
  const tail = sql`substr(${runs.id}, 25)`;
  const { lo, hi } = prefixRange(prefix);
  // past `ffff…`: a last group is hex digits, below `g` under every collation — an open range would not use the index
  const where: SQL[] = [sql`${tail} >= ${lo}`, sql`${tail} < ${hi ?? 'g'}`, sql`substr(${runs.id}, 25, ${prefix.length}) = ${prefix}`, sql`length(${runs.id}) = 36`];
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
