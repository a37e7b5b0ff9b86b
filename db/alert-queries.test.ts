// The alerts' storage on both dialects: the upsert that decides who fires a key (once per
// cool-down, whichever connection asks, also at the same moment), the delivery noted on the firing
// it belongs to, the groups' marks, and the facts the rules read (a run's failed nodes, an agent's
// nodes over the last minutes — flow runs only).
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '../test/helpers/dialects';
import { seedRuns } from '../test/helpers/seed-history';
import { agentNodeOutcomes, alertRow, claimAlert, failedNodesOfRun, groupAlerts, noteDelivery, type AlertFiring } from './alert-queries';
import { nodeSignature } from './run-aggregates';
import { oldestQueuedRun } from './status-queries';
import type { Db } from './types';

const T0 = Date.UTC(2026, 5, 15, 12);
const MIN = 60_000;
const HOUR = 60 * MIN;
const firing = (key: string, extra: Partial<AlertFiring> = {}): AlertFiring => ({ key, rule: 'new_failure', agent: 'classifier', sig: 'abc', summary: `alert ${key}`, ...extra });

describe.each(DIALECTS)('alerts on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });
  beforeEach(async () => {
    await db.q.delete(db.t.alerts);
  });

  it('fires a key once per cool-down: a new key fires, the same key within the cool-down does not, at its end it fires again', async () => {
    expect(await claimAlert(db, firing('new_failure:abc'), T0, HOUR)).toBe(true);
    expect(await claimAlert(db, firing('new_failure:abc'), T0 + 10 * MIN, HOUR)).toBe(false);
    expect(await claimAlert(db, firing('new_failure:abc'), T0 + HOUR - 1, HOUR)).toBe(false);
    // another key is its own
    expect(await claimAlert(db, firing('new_failure:def', { sig: 'def' }), T0 + 10 * MIN, HOUR)).toBe(true);
    expect(await alertRow(db, 'new_failure:abc')).toMatchObject({ firedAt: T0, coolUntil: T0 + HOUR, timesFired: 1, status: 'fired', tries: 0 });
    await noteDelivery(db, 'new_failure:abc', T0, { status: 'delivered', tries: 2, lastError: 'HTTP 500', deliveredAt: T0 + 5 });

    expect(await claimAlert(db, firing('new_failure:abc', { summary: 'again' }), T0 + HOUR, HOUR)).toBe(true);
    // the new firing starts its delivery afresh
    expect(await alertRow(db, 'new_failure:abc')).toMatchObject({
      firedAt: T0 + HOUR,
      coolUntil: T0 + 2 * HOUR,
      timesFired: 2,
      status: 'fired',
      tries: 0,
      lastError: null,
      deliveredAt: null,
      summary: 'again',
    });
    // a late note about the earlier firing changes nothing of the new one
    await noteDelivery(db, 'new_failure:abc', T0, { status: 'failed', tries: 4, lastError: 'late', deliveredAt: null });
    expect(await alertRow(db, 'new_failure:abc')).toMatchObject({ status: 'fired', tries: 0, lastError: null });
  });

  it('of connections firing one key at the same moment, exactly one fires it', async () => {
    const others = [otherProcess(t), otherProcess(t), otherProcess(t)];
    try {
      const won = await Promise.all(
        [db, ...others.map((o) => o.db)].flatMap((d) => [0, 1].map(() => claimAlert(d, firing('failure_share:classifier', { rule: 'failure_share', sig: null }), T0, HOUR))),
      );
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await alertRow(db, 'failure_share:classifier')).toMatchObject({ timesFired: 1 });
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });

  it("marks a failure group with its new_failure alert, and only those groups' rows", async () => {
    await claimAlert(db, firing('new_failure:abc'), T0, HOUR);
    await claimAlert(db, firing('failure_share:classifier', { rule: 'failure_share', sig: null }), T0, HOUR);
    await noteDelivery(db, 'new_failure:abc', T0, { status: 'delivered', tries: 1, lastError: null, deliveredAt: T0 + 3 });
    const marks = await groupAlerts(db, ['abc', 'zzz']);
    expect([...marks]).toEqual([['abc', { firedAt: T0, status: 'delivered', timesFired: 1, tries: 1 }]]);
    expect(await groupAlerts(db, [])).toEqual(new Map());
  });

  it("reads a run's failed nodes with their signatures, and an agent's finished nodes of flow runs since a time", async () => {
    const failed = (at: number) => ({
      nodeId: 'classify',
      agent: 'classifier',
      status: 'failed' as const,
      startedAt: at,
      error: { code: 'provider_error', message: 'every model failed' },
    });
    const ok = (at: number) => ({ nodeId: 'classify', agent: 'classifier', status: 'succeeded' as const, startedAt: at });
    await seedRuns(db, [
      { id: `${dialect}-a`, status: 'failed', startedAt: T0 - 5 * MIN, nodes: [failed(T0 - 5 * MIN), { nodeId: 'draft', agent: 'writer', status: 'skipped', startedAt: T0 }] },
      { id: `${dialect}-b`, status: 'succeeded', startedAt: T0 - 4 * MIN, nodes: [ok(T0 - 4 * MIN)] },
      { id: `${dialect}-c`, status: 'succeeded', startedAt: T0 - 3 * MIN, nodes: [ok(T0 - 3 * MIN)] },
      // before the window, and a replay inside it: neither counted
      { id: `${dialect}-old`, status: 'failed', startedAt: T0 - 30 * MIN, nodes: [failed(T0 - 30 * MIN)] },
      { id: `${dialect}-rp`, kind: 'replay', status: 'failed', startedAt: T0 - 2 * MIN, nodes: [failed(T0 - 2 * MIN)] },
    ]);
    const sig = nodeSignature('classifier', { code: 'provider_error', message: 'every model failed' }).sig;
    expect(await failedNodesOfRun(db, `${dialect}-a`)).toEqual([{ nodeId: 'classify', agent: 'classifier', sig }]);
    expect(await failedNodesOfRun(db, `${dialect}-b`)).toEqual([]);
    expect(await agentNodeOutcomes(db, 'classifier', T0 - 15 * MIN)).toEqual({ finished: 3, failed: 1 });
    expect(await agentNodeOutcomes(db, 'writer', T0 - 15 * MIN)).toEqual({ finished: 0, failed: 0 });
  });

  it('finds the queued run that has waited longest', async () => {
    const { runs } = db.t;
    expect(await oldestQueuedRun(db)).toBeNull();
    const queued = (id: string, queuedAt: number) => ({ id, project: 'p', flow: 'triage', status: 'queued' as const, startedAt: queuedAt, queuedAt });
    await db.q.insert(runs).values([queued(`${dialect}-q2`, T0 - MIN), queued(`${dialect}-q1`, T0 - 9 * MIN), { ...queued(`${dialect}-run`, T0 - HOUR), status: 'running' }]);
    expect(await oldestQueuedRun(db)).toEqual({ id: `${dialect}-q1`, queuedAt: T0 - 9 * MIN });
  });
});
