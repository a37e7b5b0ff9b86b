// A run's events on PostgreSQL, across processes (DESIGN: "A run's events"): the dashboard queues
// the run (POST /api/runs in this process), a real `aqven worker` process runs it, and GET
// /api/runs/:id/events follows it from queued to its end through the database alone — a streamed
// node's discarded attempt and its text tagged by attempt, a cut resumed with Last-Event-ID — and
// `aqven show --follow` follows the next one and exits 0.
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import type { Db } from '@/db/types';
import { startSimulator, type SimServer } from '@/lib/sim';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';
import { aqvenHere, ensureCliBuilt } from '../cli/aqven-process';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { foldEvents, onceLabels, readEvents, triageOnce } from '../helpers/run-event-stream';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase, FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { closeDashboardAndWorker, startWorker, type WorkerProcess } from './workers';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
const REPLY = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
let tdb: TestDatabase;
let sim: SimServer;
let dir: string;
let worker: WorkerProcess;
let db: Db;

beforeAll(async () => {
  ensureCliBuilt();
  tdb = await testDatabase({ migrated: true });
  sim = await startSimulator({
    scripts: {
      [FLASH_LITE]: [{ kind: 'ok' }],
      // the streamed draft: an answer ending in an error (discarded, retried), then the reply, paced
      [GPT_OSS]: [
        { kind: 'provider_error', variant: 'finish_error', text: 'Dear customer, a first draft that breaks' },
        { kind: 'ok', text: REPLY, latency: { first_token_ms: 0, tokens_per_s: 600 } },
      ],
    },
  });
  dir = copyShowcase();
  process.env.AQVEN_PROJECT = dir;
  process.env.AQVEN_SIMULATE = '1';
  process.env.AQVEN_DATABASE_URL = tdb.url;
  db = (await (await import('@/lib/server/session')).serverSession()).db;
}, 120_000);

afterAll(() => closeDashboardAndWorker({ worker, sim, tdb, restoreEnv }), 60_000);

const queue = async (ticket: string): Promise<string> => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new NextRequest('http://localhost/api/runs', {
      method: 'POST',
      body: JSON.stringify({ flow: 'triage', input: { ticket } }),
      headers: { 'content-type': 'application/json', ...LOCAL_HEADERS },
    }),
  );
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
};

const events = async (id: string, headers: Record<string, string> = {}) => {
  const { GET } = await import('@/app/api/runs/[id]/events/route');
  return GET(new NextRequest(`http://localhost/api/runs/${id}/events`, { headers: { ...LOCAL_HEADERS, ...headers } }), { params: Promise.resolve({ id }) });
};

describe('GET /api/runs/:id/events on PostgreSQL, the run in a worker process', () => {
  it('follows a queued run from the queue to its end, and a cut resumes with nothing lost or repeated', async () => {
    const id = await queue('My invoice is wrong');
    // connected before any worker exists: the run is seen queued first
    const part = await readEvents(await events(id), { stopAfter: 1 });
    expect(part.events.map((e) => e.event.type)).toEqual(['run.queued']);
    worker = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 1 });
    const rest = await readEvents(await events(id, { 'last-event-id': part.events[0]!.id }));
    expect(rest.ended).toBe(true);
    const all = [...part.events, ...rest.events];
    expect(onceLabels(all)).toEqual(triageOnce({ queued: true, classify: 1, draft: 2 }));
    expect(all.find((e) => e.event.type === 'attempt.ended' && (e.event.data as { node: string }).node === 'draft')!.event.data).toMatchObject({
      seq: 1,
      discarded: true,
      action: 'retry',
    });
    const texts = all.filter((e) => e.event.type === 'attempt.text').map((e) => e.event.data as { seq: number; from: number; text: string });
    const of = (seq: number) => texts.filter((t) => t.seq === seq).reduce((s, t) => s.slice(0, t.from) + t.text, '');
    expect(of(1)).toMatch(/^Dear customer, a first draft/);
    expect(of(2)).toBe(REPLY);
    expect(foldEvents(all).run).toEqual(await getRunFacts(db, id));
    expect(all.at(-1)!.event).toMatchObject({ type: 'run.ended', data: { status: 'succeeded' } });
  }, 120_000);

  it('aqven show --follow follows the next queued run to its end and exits 0', async () => {
    const id = await queue('Follow me from the terminal');
    const followed = await aqvenHere(['show', id, '--follow', '--project', dir], { AQVEN_DATABASE_URL: tdb.url });
    expect(followed.code).toBe(0);
    expect(followed.out).toMatch(new RegExp(`^run ${id} .* SUCCEEDED`));
  }, 60_000);
});
