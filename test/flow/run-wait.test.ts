// Waiting for a run's end through the database (lib/flow/run-wait.ts), with an injected clock: the
// reads come at 50 ms, then ×1.5 up to 1 s, never past the wait; an end, a run gone and a client
// gone each stop it.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextPollMs, waitForRunEnd, WAIT_MAX_POLL_MS } from '@/lib/flow/run-wait';
import { openTestDb, type TestDb } from '../helpers/dialects';

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb('sqlite');
  await t.db.q.insert(t.db.t.runs).values({ id: 'r1', project: 'p', flow: 'triage', status: 'running', input: {}, startedAt: Date.now() } as typeof t.db.t.runs.$inferInsert);
}, 90_000);
afterAll(() => t?.close());

/** a clock that moves only when slept on, and the sleeps asked for; `onSleep` runs at each */
const clock = (onSleep: (sleeps: number[]) => Promise<void> | void = () => {}) => {
  let now = 1_000_000;
  const sleeps: number[] = [];
  return { sleeps, now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms), await onSleep(sleeps)) };
};

describe('waitForRunEnd', () => {
  it('reads after 50 ms, then every ×1.5 up to 1 s, and stops at the wait: timeout', async () => {
    expect([null, 50, 75, 800, 1000].map(nextPollMs)).toEqual([50, 75, 113, 1000, WAIT_MAX_POLL_MS]);
    const c = clock();
    expect(await waitForRunEnd(t.db, 'r1', 3000, c)).toBe('timeout');
    expect(c.sleeps.slice(0, 4)).toEqual([50, 75, 113, 170]);
    expect(c.sleeps.every((ms) => ms <= WAIT_MAX_POLL_MS)).toBe(true);
    expect(c.sleeps.reduce((a, b) => a + b, 0)).toBe(3000);
  });

  it('ends at the first read after the run ended, and when the run is gone', async () => {
    const c = clock(async (sleeps) => {
      if (sleeps.length === 3) await t.db.q.update(t.db.t.runs).set({ status: 'succeeded' }).where(eq(t.db.t.runs.id, 'r1'));
    });
    expect(await waitForRunEnd(t.db, 'r1', 60_000, c)).toBe('ended');
    expect(c.sleeps).toHaveLength(3);
    expect(await waitForRunEnd(t.db, 'no-such-run', 60_000, clock())).toBe('gone');
  });

  it('stops when the client goes away', async () => {
    await t.db.q.update(t.db.t.runs).set({ status: 'queued' }).where(eq(t.db.t.runs.id, 'r1'));
    const gone = new AbortController();
    const c = clock((sleeps) => {
      if (sleeps.length === 2) gone.abort();
    });
    expect(await waitForRunEnd(t.db, 'r1', 60_000, { ...c, signal: gone.signal })).toBe('aborted');
    expect(c.sleeps).toHaveLength(2);
  });
});
