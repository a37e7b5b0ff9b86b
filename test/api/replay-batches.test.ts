// A failure group's bulk replay as every dashboard process sees it (DESIGN: The dashboard, "Replay
// with the current policy"): started through the action on the real session (simulated), its
// progress is stored; a process that did not start it (here: this one with its memory emptied, as
// after a restart) answers GET /api/replays/:batchId from the database, the batch is in the list of
// recent ones, and a batch whose process stopped reads as stopped. 404 only for an id never stored.
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { insertReplayBatch, replayBatch } from '@/db/replay-batch-queries';
import type { Db } from '@/db/types';
import type { ReplayFormState } from '@/lib/forms/replay';
import type { BatchResponse } from '@/lib/dashboard/replay-types';
import { BATCH_STALE_MS } from '@/lib/flow/replay-batch-store';
import { otherProcess } from '../helpers/dialects';
import { runEnded } from '../helpers/run-ended';
import { DRAFT_REFUSES, simulatedDashboard } from '../helpers/simulated-dashboard';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const dashboard = simulatedDashboard();
let db: Db;

const { server } = dashboard;
const replays = () => import('@/lib/server/replay');
const IDLE: ReplayFormState = { status: 'idle' };
const replayGroup = async (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return (await import('@/lib/actions/replay-group')).replayGroupAction(IDLE, fd);
};
const getBatch = async (id: string) => {
  const { GET } = await import('@/app/api/replays/[batchId]/route');
  const res = await GET(new Request(`http://localhost/api/replays/${id}`, { headers: LOCAL_HEADERS }) as never, { params: Promise.resolve({ batchId: id }) });
  return { status: res.status, body: (await res.json()) as BatchResponse & { error?: string } };
};
/** this process forgets the batches it ran, as a restarted one (or another one behind the load balancer) never knew them */
const forget = () => (globalThis as { __aqvenReplayBatches?: Map<string, unknown> }).__aqvenReplayBatches?.clear();

const finished = (id: string) => runEnded(db, id);

beforeAll(async () => {
  db = (await dashboard.open({ scripts: DRAFT_REFUSES })).session.db;
}, 90_000);

afterAll(() => dashboard.close());

describe('a bulk replay’s progress outlives the memory of the process that ran it', () => {
  it('is answered from the database once the process has forgotten it, and listed among the recent batches', async () => {
    const T0 = Date.now();
    const originals: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await (await server()).startRun('triage', { ticket: `invoice wrong ${i} ${Math.random()}` });
      if (!res.ok) throw new Error(res.error);
      originals.push((await finished(res.id)).id);
    }
    const [row] = await db.q
      .select({ sig: db.t.nodeRuns.failureSig })
      .from(db.t.nodeRuns)
      .where(and(eq(db.t.nodeRuns.runId, originals[0]!), eq(db.t.nodeRuns.nodeId, 'draft'), isNotNull(db.t.nodeRuns.failureSig)));
    const sig = row!.sig!;
    const started = await replayGroup({ sig, since: String(T0 - 60_000), cap: '1' });
    expect(started).toMatchObject({ status: 'started', total: 2 });
    const batchId = (started as { batchId: string }).batchId;

    // another process (its own connection) finds the batch as soon as its id is answered
    const other = otherProcess({ db, target: db.name, close: async () => undefined });
    try {
      expect(await replayBatch(other.db, batchId)).toMatchObject({ label: sig, total: 2, finishedAt: null });
      for (const end = Date.now() + 30_000; Date.now() < end && !(await replayBatch(other.db, batchId))?.finishedAt;) await new Promise((r) => setTimeout(r, 50));
      expect(await replayBatch(other.db, batchId)).toMatchObject({ label: sig, total: 2, succeeded: 0, finishedAt: expect.any(Number) });
    } finally {
      await other.close();
    }

    forget();
    const got = await getBatch(batchId);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: batchId, label: sig, total: 2, done: true, stopped: null, counts: { succeeded: 0, failed: 2, not_started: 0 } });
    expect(new Set(got.body.items.map((i) => i.runId))).toEqual(new Set(originals));
    for (const it of got.body.items) expect((await getRunFacts(db, it.replayRunId!))?.status).toBe('failed');

    const recent = await (await replays()).recentReplayBatchList({ limit: 5, label: sig });
    expect(recent[0]).toMatchObject({ id: batchId, label: sig, state: 'finished', total: 2, succeeded: 0, finished: 2 });
    expect((await getBatch('no-such-batch')).status).toBe(404);
  });

  it('a batch whose process stopped writing is answered as stopped, not as unknown', async () => {
    const at = Date.now() - BATCH_STALE_MS - 1000;
    const items = [
      { runId: 'orig-a', nodeId: 'draft', state: 'succeeded', replayRunId: null, reason: null, estimateUsd: 0.01, costUsd: 0.01 },
      { runId: 'orig-b', nodeId: 'draft', state: 'waiting', replayRunId: null, reason: null, estimateUsd: null, costUsd: 0 },
    ];
    const progress = {
      total: 2,
      concurrency: 4,
      capUsd: 1,
      spentUsd: 0.01,
      counts: { waiting: 1, running: 0, succeeded: 1, failed: 0, refused: 0, not_started: 0 },
      peakRunning: 1,
      done: false,
      stopped: null,
      items,
    };
    await insertReplayBatch(
      db,
      { id: 'lost-batch', label: 'sig-x', startedBy: 'ana', startedAt: at, owner: 'a-dead-process', total: 2, succeeded: 1, spentUsd: 0.01, capUsd: 1, stopped: null, progress },
      at,
    );
    const got = await getBatch('lost-batch');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      done: true,
      stopped: 'the server process running this batch stopped; 1 of 2 replays had finished',
      counts: { succeeded: 1, not_started: 1, waiting: 0 },
    });
  });
});
