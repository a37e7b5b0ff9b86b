// When a run's facts are committed (DESIGN: Storage, "Durable points"): an attempt a node goes on
// from is committed before the next request; the attempt a node ends on joins the commit of what
// follows — before the next turn calls a model, or with the run's end — and when that commit
// fails, the run closes as a storage failure, its last nodes failed with it.
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteDb } from '@/db/types';
import { beginRun, RunNotRecordedError } from '@/lib/flow/run-flow';
import { routeToSimulator } from '@/lib/flow/simulate';
import { getRunRecord } from '@/lib/flow/stored-run';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

/** What the database holds between commits (one connection, nothing uncommitted between two turns of the event loop). */
const stored = (db: SqliteDb, runId: string) => {
  const q = (sql: string) => (db.$client.prepare(sql).get(runId) as { n: number }).n;
  return {
    attemptsEnded: q(`SELECT count(*) AS n FROM attempts WHERE run_id = ? AND finished_at IS NOT NULL`),
    nodesEnded: q(`SELECT count(*) AS n FROM node_runs WHERE run_id = ? AND status IN ('succeeded', 'failed')`),
    runEnded: q(`SELECT count(*) AS n FROM runs WHERE id = ? AND status <> 'running'`),
  };
};

/**
 * Watches the run store's commits (it commits with `transaction(drain).immediate()`, made once):
 * `inside(after)` runs within each commit once its statements ran, and may throw to roll it back.
 */
function watchCommits(db: SqliteDb, inside: () => void) {
  const c = db.$client as unknown as { transaction: (fn: (...a: unknown[]) => unknown) => unknown };
  const made = c.transaction.bind(c);
  c.transaction = (fn) =>
    made((...a: unknown[]) => {
      fn(...a);
      inside();
    });
}

describe('durable points of a run', () => {
  it("triage: classify's attempt is committed before draft's request; draft's attempt, its node and the run end in one commit", async () => {
    w = await world({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] });
    const { project, sim } = w;
    const db = w.db as SqliteDb;
    let runId = '';
    const commits: ReturnType<typeof stored>[] = [];
    watchCommits(db, () => runId && commits.push(stored(db, runId)));
    const { providers, env } = routeToSimulator(project, sim);
    const atRequest: ReturnType<typeof stored>[] = [];
    const fetchSeen: typeof fetch = (url, init) => {
      atRequest.push(stored(db, runId));
      return fetch(url, init);
    };
    const started = await beginRun({ project, flow: 'triage', input: { ticket: 'I was charged twice' }, providers, env, db, fetch: fetchSeen });
    runId = started.runId;
    const record = await started.done;
    expect(record.status).toBe('succeeded');
    expect(record.nodes.filter((n) => n.status === 'succeeded').map((n) => n.id)).toEqual(['classify', 'draft']);
    // classify's request, then draft's: by then classify's attempt and node were committed
    expect(atRequest).toHaveLength(2);
    expect(atRequest[1]).toEqual({ attemptsEnded: 1, nodesEnded: 1, runEnded: 0 });
    // the commit that ended the run wrote draft's attempt and node too
    const last = commits.findIndex((c) => c.runEnded === 1);
    expect(last).toBe(commits.length - 1);
    expect(commits[last - 1]).toMatchObject({ attemptsEnded: 1, nodesEnded: 1, runEnded: 0 });
    expect(commits[last]).toMatchObject({ attemptsEnded: 2, nodesEnded: 2 });
  });

  it('the last commit fails (a full disk): the run closes failed with cannot_record, draft with it; classify stays as committed', async () => {
    w = await world({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] });
    const { project, sim } = w;
    const db = w.db as SqliteDb;
    let runId = '';
    let failed = 0;
    watchCommits(db, () => {
      // the commit that would end the run as succeeded is refused once, as SQLite refuses a full disk
      if (!runId || failed || !db.$client.prepare(`SELECT 1 FROM runs WHERE id = ? AND status = 'succeeded'`).get(runId)) return;
      failed++;
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    });
    const { providers, env } = routeToSimulator(project, sim);
    const started = await beginRun({ project, flow: 'triage', input: { ticket: 'I was charged twice' }, providers, env, db });
    runId = started.runId;
    const err = await started.done.then(
      () => null,
      (e: unknown) => e,
    );
    expect(failed).toBe(1);
    expect(err).toBeInstanceOf(RunNotRecordedError);
    const { record, recorded } = err as RunNotRecordedError;
    expect(recorded).toBe(true);
    expect(record).toMatchObject({ status: 'failed', error: { code: 'cannot_record', node: 'draft' } });
    expect(record.nodes.find((n) => n.id === 'classify')).toMatchObject({ status: 'succeeded' });
    expect(record.nodes.find((n) => n.id === 'draft')).toMatchObject({ status: 'failed', error: { code: 'cannot_record' } });
    // what is stored: the run failed with cannot_record, classify as committed before; what was
    // queued with the lost commit is lost with it — draft's end and attempt, and its row too unless
    // an earlier commit (FLUSH_MS) had written it, in which case it is failed with the run
    const back = (await getRunRecord(db, runId))!;
    expect(back).toMatchObject({ status: 'failed', error: { code: 'cannot_record' } });
    expect(back.nodes.find((n) => n.id === 'classify')).toMatchObject({ status: 'succeeded', attempts: [expect.objectContaining({ outcome: 'ok' })] });
    const draft = back.nodes.find((n) => n.id === 'draft');
    if (draft) expect(draft).toMatchObject({ status: 'failed', error: { code: 'cannot_record' } });
    expect(stored(db, runId).attemptsEnded).toBe(1);
  });
});
