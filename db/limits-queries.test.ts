// Measured structural limits on both dialects: a run the same day with the same settings resumes the
// stored row (its levels kept), another date or other settings make a new one, and the newest
// measurement per model and dimension is what check and the pages read.
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { STALE_RUNNING_MS, type LimitSettings } from '@/lib/shared/limits-types';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { endHeldModelLimits, latestModelLimits, modelLimitHistory, openModelLimit, saveModelLimit } from './limits-queries';
import { transaction } from './tx';
import type { Db } from './types';

const SETTINGS: LimitSettings = { trials: 5, threshold: 0.9, maxTokens: 4096, strict: false, tasks: 1 };
const T0 = Date.UTC(2026, 0, 1, 12);
const key = (model: string, dimension: 'depth' | 'list' | 'enum', measuredOn = '2026-01-01', settingsKey = 's1') => ({ model, dimension, settingsKey, measuredOn });
const level = (n: number, ok: number) => ({ level: n, trials: 5, firstTryValid: ok, afterRepairValid: ok, truncated: 0, calls: 5 });

describe.each(DIALECTS)('model limits on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  beforeEach(async () => {
    await db.q.delete(db.t.modelLimits);
  });

  it('a second open of the same key resumes the row with its levels; the newest per model and dimension is read', async () => {
    const a = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: null, now: T0 });
    expect(a).toMatchObject({ status: 'running', levels: [], calls: 0, trials: 5, threshold: 0.9, measuredOn: '2026-01-01' });
    await saveModelLimit(
      db,
      a.id,
      { status: 'partial', lastHeld: 4, firstFailed: null, levels: [level(2, 5), level(4, 5)], calls: 10, inputTokens: 3_000_000_000, outputTokens: 20, costUsd: 0.5 },
      T0 + 1,
    );

    const again = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: null, now: T0 + 2 });
    expect(again.id).toBe(a.id);
    expect(again).toMatchObject({ status: 'running', lastHeld: 4, calls: 10, inputTokens: 3_000_000_000, costUsd: 0.5, startedAt: T0, updatedAt: T0 + 2 });
    expect(again.levels.map((l) => l.level)).toEqual([2, 4]);

    // another day: a new row, which is now the newest
    const next = await openModelLimit(db, key('openrouter:a', 'depth', '2026-01-02'), { settings: SETTINGS, runId: null, now: T0 + 86_400_000 });
    expect(next.id).not.toBe(a.id);
    await saveModelLimit(
      db,
      next.id,
      { status: 'complete', lastHeld: 5, firstFailed: 6, levels: [level(5, 5), level(6, 1)], calls: 10, inputTokens: 1, outputTokens: 1, costUsd: 0 },
      T0 + 86_400_001,
    );
    const list = await openModelLimit(db, key('openrouter:a', 'list', '2026-01-01', 's2'), { settings: { ...SETTINGS, trials: 3 }, runId: null, now: T0 + 5 });
    await openModelLimit(db, key('gemini:b', 'enum'), { settings: SETTINGS, runId: null, now: T0 + 6 });

    const latest = await latestModelLimits(db, ['openrouter:a']);
    expect(latest.map((l) => [l.dimension, l.measuredOn, l.status, l.lastHeld, l.firstFailed])).toEqual([
      ['depth', '2026-01-02', 'complete', 5, 6],
      ['list', '2026-01-01', 'running', null, null],
    ]);
    expect(latest[1]!.id).toBe(list.id);
    expect(latest[1]!.trials).toBe(3);
    expect((await latestModelLimits(db)).map((l) => `${l.model} ${l.dimension}`)).toEqual(['gemini:b enum', 'openrouter:a depth', 'openrouter:a list']);
    expect(await latestModelLimits(db, [])).toEqual([]);
    expect((await modelLimitHistory(db, 'openrouter:a')).map((l) => l.measuredOn)).toEqual(['2026-01-02', '2026-01-01', '2026-01-01']);
  });

  it('a later run that decided nothing does not hide an earlier measurement', async () => {
    const a = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: null, now: T0 });
    await saveModelLimit(
      db,
      a.id,
      { status: 'complete', lastHeld: 5, firstFailed: 6, levels: [level(5, 5), level(6, 1)], calls: 10, inputTokens: 1, outputTokens: 1, costUsd: 0 },
      T0 + 1,
    );
    // other settings, every answer an error: finished with no level judged
    const b = await openModelLimit(db, key('openrouter:a', 'depth', '2026-01-01', 's2'), { settings: { ...SETTINGS, trials: 4 }, runId: null, now: T0 + 2 });
    expect((await latestModelLimits(db))[0]).toMatchObject({ id: b.id, status: 'running' }); // a probe in progress is shown
    await saveModelLimit(db, b.id, { status: 'partial', lastHeld: null, firstFailed: null, levels: [], calls: 4, inputTokens: 1, outputTokens: 0, costUsd: 0 }, T0 + 3);
    expect((await latestModelLimits(db))[0]).toMatchObject({ id: a.id, lastHeld: 5, firstFailed: 6 });
    // with nothing else measured, the undecided row is what there is
    await db.q.delete(db.t.modelLimits).where(eq(db.t.modelLimits.id, a.id));
    expect((await latestModelLimits(db))[0]).toMatchObject({ id: b.id, status: 'partial', lastHeld: null });
  });

  it('a key a running probe holds is refused to another probe until that one ends or goes stale; the same run reopens it', async () => {
    for (const id of ['run-a', 'run-b', 'run-c']) await db.q.insert(db.t.runs).values({ id, project: 'p', flow: 'limits', status: 'running', kind: 'limits', startedAt: T0 });
    const a = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-a', now: T0 });
    await saveModelLimit(
      db,
      a.id,
      { status: 'running', lastHeld: 2, firstFailed: null, levels: [level(2, 5)], calls: 5, inputTokens: 1, outputTokens: 1, costUsd: 0 },
      T0 + 60_000,
    );
    // another run, while a's last level is 30 s old: refused, and a's row is left as it was
    const busy = openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-b', now: T0 + 90_000 });
    await expect(busy).rejects.toMatchObject({ name: 'LimitBusyError', runId: 'run-a', secondsAgo: 30 });
    await expect(busy).rejects.toThrow(/another aqven limits run is measuring openrouter:a depth with the same settings today \(run run-a, its last level written 30 s ago\)/);
    expect((await latestModelLimits(db))[0]).toMatchObject({ id: a.id, runId: 'run-a', status: 'running', updatedAt: T0 + 60_000, calls: 5 });
    // other settings are another key: free
    await expect(openModelLimit(db, key('openrouter:a', 'depth', '2026-01-01', 's2'), { settings: SETTINGS, runId: 'run-b', now: T0 + 90_000 })).resolves.toMatchObject({
      runId: 'run-b',
    });
    // the same run reopens its own row
    await expect(openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-a', now: T0 + 95_000 })).resolves.toMatchObject({ id: a.id, runId: 'run-a' });
    // once a's row is stale (its process died), b takes it over and resumes its levels
    const taken = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-b', now: T0 + 95_000 + STALE_RUNNING_MS + 1 });
    expect(taken).toMatchObject({ id: a.id, runId: 'run-b', status: 'running', calls: 5 });
    expect(taken.levels.map((l) => l.level)).toEqual([2]);
    // and once b ends it, c may open it at once
    await saveModelLimit(
      db,
      taken.id,
      { status: 'complete', lastHeld: 4, firstFailed: 5, levels: [level(2, 5)], calls: 9, inputTokens: 1, outputTokens: 1, costUsd: 0 },
      T0 + 95_000 + STALE_RUNNING_MS + 2,
    );
    await expect(openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-c', now: T0 + 95_000 + STALE_RUNNING_MS + 3 })).resolves.toMatchObject({
      id: a.id,
      runId: 'run-c',
    });
  });

  it("a limits run that died leaves its running rows partial at once, and no other run's", async () => {
    for (const id of ['run-d1', 'run-d2']) await db.q.insert(db.t.runs).values({ id, project: 'p', flow: 'limits', status: 'running', kind: 'limits', startedAt: T0 });
    const a = await openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-d1', now: T0 });
    const b = await openModelLimit(db, key('openrouter:a', 'list'), { settings: SETTINGS, runId: 'run-d2', now: T0 });
    expect(await transaction(db, (q) => endHeldModelLimits(db, q, 'run-d1', T0 + 5))).toBe(1);
    const rows = await modelLimitHistory(db, 'openrouter:a');
    expect(rows.find((r) => r.id === a.id)).toMatchObject({ status: 'partial', updatedAt: T0 + 5 });
    expect(rows.find((r) => r.id === b.id)).toMatchObject({ status: 'running', updatedAt: T0 });
    // and the next probe opens it at once, not STALE_RUNNING_MS later
    await expect(openModelLimit(db, key('openrouter:a', 'depth'), { settings: SETTINGS, runId: 'run-d2', now: T0 + 6 })).resolves.toMatchObject({ id: a.id, runId: 'run-d2' });
  });

  it('a purged limits run leaves its measurement, without the link', async () => {
    await db.q.insert(db.t.runs).values({ id: 'run-l', project: 'p', flow: 'limits', status: 'succeeded', kind: 'limits', startedAt: T0 });
    const a = await openModelLimit(db, key('openrouter:a', 'enum'), { settings: SETTINGS, runId: 'run-l', now: T0 });
    expect(a.runId).toBe('run-l');
    await db.q.delete(db.t.runs);
    expect((await latestModelLimits(db))[0]).toMatchObject({ model: 'openrouter:a', runId: null });
  });
});
