// A model's measured structural limits (DESIGN: Structural limits, "Storage"): one row per model,
// dimension, call settings and UTC date, written level by level by the probe (lib/limits/probe.ts)
// and read by `aqven check`, the agent page and the providers page. Pure reads and writes over `Db`:
// no 'server-only', so the CLI uses them too.
import { and, desc, eq, inArray, isNull, lt, ne, or } from 'drizzle-orm';
import { shortRunId } from '@/lib/shared/short-id';
import { STALE_RUNNING_MS, type LimitDimension, type LimitLevel, type LimitSettings, type LimitStatus, type ModelLimit } from '@/lib/shared/limits-types';
import type { ModelLimitRow } from './schema';
import type { Db, Orm } from './types';

export type { LimitDimension, LimitLevel, ModelLimit } from '@/lib/shared/limits-types';

/** A stored measurement with its row id, for the probe that extends it. */
export interface StoredModelLimit extends ModelLimit {
  id: number;
  settingsKey: string;
}

function view(r: ModelLimitRow): StoredModelLimit {
  const settings = r.settings as LimitSettings;
  return {
    id: r.id,
    settingsKey: r.settingsKey,
    model: r.model,
    dimension: r.dimension,
    status: r.status,
    lastHeld: r.lastHeld,
    firstFailed: r.firstFailed,
    threshold: settings.threshold,
    trials: settings.trials,
    levels: (r.levels as LimitLevel[]) ?? [],
    calls: r.calls,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    costUsd: r.costUsd,
    measuredOn: r.measuredOn,
    startedAt: r.startedAt,
    updatedAt: r.updatedAt,
    runId: r.runId,
    settings,
  };
}

/**
 * The newest measurement per (model, dimension), under any settings, of `models` (every model when
 * omitted), ordered by model then dimension. A row still running or partial is returned as it is:
 * the caller says so next to its figures.
 */
export async function latestModelLimits(db: Db, models?: string[]): Promise<StoredModelLimit[]> {
  if (models && models.length === 0) return [];
  const { modelLimits } = db.t;
  const rows = await db.q
    .select()
    .from(modelLimits)
    .where(models ? inArray(modelLimits.model, models) : undefined)
    .orderBy(desc(modelLimits.updatedAt), desc(modelLimits.id));
  // a finished row that decided nothing (every answer an error, stopped before a level was judged)
  // must not hide an earlier measurement: it is shown only when there is no other
  const decided = (r: (typeof rows)[number]) => r.status === 'running' || r.lastHeld !== null || r.firstFailed !== null;
  const newest = new Map<string, StoredModelLimit>();
  const fallback = new Map<string, StoredModelLimit>();
  for (const r of rows) {
    const key = `${r.model}\u0000${r.dimension}`;
    if (!decided(r)) {
      if (!fallback.has(key)) fallback.set(key, view(r));
    } else if (!newest.has(key)) newest.set(key, view(r));
  }
  for (const [key, v] of fallback) if (!newest.has(key)) newest.set(key, v);
  const order: Record<LimitDimension, number> = { depth: 0, list: 1, enum: 2 };
  return [...newest.values()].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : order[a.dimension] - order[b.dimension]));
}

export interface LimitKey {
  model: string;
  dimension: LimitDimension;
  settingsKey: string;
  measuredOn: string;
}

/** The measurement stored under `key`, or null. */
export async function findModelLimit(db: Db, key: LimitKey): Promise<StoredModelLimit | null> {
  const { modelLimits: m } = db.t;
  const [row] = await db.q
    .select()
    .from(m)
    .where(and(eq(m.model, key.model), eq(m.dimension, key.dimension), eq(m.settingsKey, key.settingsKey), eq(m.measuredOn, key.measuredOn)))
    .limit(1);
  return row ? view(row) : null;
}

/** Another probe is measuring the same key now: its row is not written into (two probes would overwrite each other's levels). */
export class LimitBusyError extends Error {
  constructor(
    readonly key: LimitKey,
    readonly runId: string | null,
    readonly secondsAgo: number,
  ) {
    super(
      `another aqven limits run is measuring ${key.model} ${key.dimension} with the same settings today (run ${runId ? shortRunId(runId) : 'unknown'}, ` +
        `its last level written ${secondsAgo} s ago): wait for it to end, or measure with other settings (--trials, --threshold, --max-tokens)`,
    );
    this.name = 'LimitBusyError';
  }
}

/**
 * The row a probe writes into: the one stored under `key` (a later run the same day with the same
 * settings resumes it, keeping its levels), or a new one. Either way it is marked running and
 * attributed to `runId` — unless another run holds it: running, and written within
 * STALE_RUNNING_MS (LimitBusyError). The claim is one conditional UPDATE, so of two probes opening
 * the same key at once one gets the row; a row left running by a process that died is taken over
 * once it is stale.
 */
export async function openModelLimit(db: Db, key: LimitKey, o: { settings: LimitSettings; runId: string | null; now: number }): Promise<StoredModelLimit> {
  const { modelLimits: m } = db.t;
  await db.q
    .insert(m)
    .values({ ...key, settings: o.settings, status: 'running', levels: [], runId: o.runId, startedAt: o.now, updatedAt: o.now })
    .onConflictDoNothing();
  const free = or(ne(m.status, 'running'), isNull(m.runId), o.runId === null ? undefined : eq(m.runId, o.runId), lt(m.updatedAt, o.now - STALE_RUNNING_MS));
  await db.q
    .update(m)
    .set({ status: 'running', runId: o.runId, updatedAt: o.now })
    .where(and(eq(m.model, key.model), eq(m.dimension, key.dimension), eq(m.settingsKey, key.settingsKey), eq(m.measuredOn, key.measuredOn), free));
  const row = await findModelLimit(db, key);
  if (!row) throw new Error(`model_limits: the row for ${key.model} ${key.dimension} vanished as it was opened`);
  if (row.runId !== o.runId || row.updatedAt !== o.now) throw new LimitBusyError(key, row.runId, Math.max(0, Math.round((o.now - row.updatedAt) / 1000)));
  return row;
}

/** What a probe knows of one dimension after a level: written whole (one process owns the row while it runs). */
export interface ModelLimitProgress {
  status: LimitStatus;
  lastHeld: number | null;
  firstFailed: number | null;
  levels: LimitLevel[];
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export async function saveModelLimit(db: Db, id: number, p: ModelLimitProgress, now: number): Promise<void> {
  const { modelLimits: m } = db.t;
  await db.q
    .update(m)
    .set({
      status: p.status,
      lastHeld: p.lastHeld,
      firstFailed: p.firstFailed,
      levels: p.levels,
      calls: p.calls,
      inputTokens: p.inputTokens,
      outputTokens: p.outputTokens,
      costUsd: p.costUsd,
      updatedAt: now,
    })
    .where(eq(m.id, id));
}

/** Every measurement of `model`, newest first (the history behind latestModelLimits). */
export async function modelLimitHistory(db: Db, model: string): Promise<StoredModelLimit[]> {
  const { modelLimits: m } = db.t;
  const rows = await db.q.select().from(m).where(eq(m.model, model)).orderBy(desc(m.updatedAt), desc(m.id));
  return rows.map(view);
}

/**
 * A limits run that ended without writing its rows' end (its process died: the lease sweep, or a
 * PostgreSQL worker taking it over): the rows it still holds `running` become `partial` at once —
 * shown so, and free for the next probe with those settings to resume — instead of waiting
 * STALE_RUNNING_MS. Runs inside the caller's transaction (`q`). Returns the rows ended.
 */
export async function endHeldModelLimits(db: Db, q: Orm, runId: string, now: number): Promise<number> {
  const { modelLimits: m } = db.t;
  const ended = await q
    .update(m)
    .set({ status: 'partial', updatedAt: now })
    .where(and(eq(m.runId, runId), eq(m.status, 'running')))
    .returning({ id: m.id });
  return ended.length;
}
