// GET /api/runs/:id/events on SQLite (DESIGN: "A run's events"): a run started through POST
// /api/runs is followed from its start to its end — a rate limit, a repair, a streamed node whose
// first attempt is discarded — its events in order, its text tagged by attempt; a client cut off
// mid-way resumes with Last-Event-ID and misses nothing, repeats nothing; refusals as every
// /api/runs/:id route has them.
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { shortRunId } from '@/lib/shared/short-id';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';
import { foldEvents, onceLabels, readEvents, routeEventSource, triageOnce } from '../helpers/run-event-stream';
import { eventually } from '../queue/workers';
import { followRunEvents } from '@/lib/dashboard/run-follow';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';
import type { Session } from '@/lib/flow/session';
import type { ScriptMap } from '@/lib/sim/types';

const dash = simulatedDashboard();
const REPLY = Array.from({ length: 800 }, (_, i) => `word${i}`).join(' ');
const SCRIPTS: ScriptMap = {
  // a 429 (the model paused a second), then an answer that fails its schema (repaired), then a good one
  [FLASH_LITE]: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'invalid', mode: 'wrong_enum' }, { kind: 'ok' }],
  // the streamed draft: an error mid-stream (its text discarded, the answer retried), then the reply, paced
  [GPT_OSS]: [
    { kind: 'provider_error', variant: 'finish_error', text: 'Dear customer, a first draft that breaks' },
    { kind: 'ok', text: REPLY, latency: { first_token_ms: 0, tokens_per_s: 600 } },
  ],
};
let session: Session;

beforeAll(async () => {
  session = (await dash.open()).session;
}, 90_000);
afterAll(() => dash.close());

/** a triage run started through POST /api/runs, its simulator playing SCRIPTS from their start */
const start = async (): Promise<string> => {
  session.simulated!.sim.loadScripts(SCRIPTS);
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new NextRequest('http://localhost/api/runs', {
      method: 'POST',
      body: JSON.stringify({ flow: 'triage', input: { ticket: 'My invoice is wrong' } }),
      headers: { 'content-type': 'application/json', ...LOCAL_HEADERS },
    }),
  );
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
};

const events = async (id: string, headers: Record<string, string> = {}, query = '') => {
  const { GET } = await import('@/app/api/runs/[id]/events/route');
  return GET(new NextRequest(`http://localhost/api/runs/${id}/events${query}`, { headers: { ...LOCAL_HEADERS, ...headers } }), { params: Promise.resolve({ id }) });
};

const fold = foldEvents;
/** the events the run has once each: a repaired classify, a draft retried once */
const ONCE = triageOnce({ classify: 2, draft: 2 });
const once = onceLabels;

describe('GET /api/runs/:id/events on SQLite', () => {
  let runId: string;
  let first: Awaited<ReturnType<typeof readEvents>>;

  it('follows a run from its start to its end, in order, and ends with it', async () => {
    runId = await start();
    first = await readEvents(await events(runId));
    expect(first).toMatchObject({ status: 200, contentType: 'text/event-stream; charset=utf-8', ended: true });
    expect(once(first.events)).toEqual(ONCE);
    // the model's pause while the attempt waited, with its origin: the 429's retry-after
    expect(first.events.find((e) => e.event.type === 'pause')!.event.data).toMatchObject({
      model: `openrouter:${FLASH_LITE}`,
      origin: { serverWait: 'retry-after: 1', askedMs: 1000 },
    });
    // the 429 and its wait are the first attempt's first try
    const tries = first.events.filter((e) => e.event.type === 'attempt.try').map((e) => e.event.data);
    expect(tries[0]).toMatchObject({ node: 'classify', seq: 1, try: { tryNo: 1, status: 429, retryAfterMs: 1000 } });
    const ended = first.events.filter((e) => e.event.type === 'attempt.ended').map((e) => e.event.data);
    expect(ended[0]).toMatchObject({ node: 'classify', seq: 1, cause: 'invalid_output', action: 'repair', discarded: true });
    expect(ended[2]).toMatchObject({ node: 'draft', seq: 1, action: 'retry', discarded: true });
    expect(first.events.at(-1)!.event).toMatchObject({ type: 'run.ended', data: { status: 'succeeded' } });
    // folded, the events are the run as stored
    expect(fold(first.events).run).toEqual(await getRunFacts(session.db, runId));
  }, 60_000);

  it("tags the streamed text by attempt: the discarded attempt's text apart from the answer's, which arrived in pieces", () => {
    const texts = first.events.filter((e) => e.event.type === 'attempt.text').map((e) => e.event.data as { node: string; seq: number; from: number; text: string });
    expect(texts.every((t) => t.node === 'draft')).toBe(true);
    const of = (seq: number) => texts.filter((t) => t.seq === seq).reduce((s, t) => s.slice(0, t.from) + t.text, '');
    expect(of(1)).toMatch(/^Dear customer, a first draft/);
    expect(of(2)).toBe(REPLY);
    expect(texts.filter((t) => t.seq === 2 && t.from > 0).length).toBeGreaterThan(0);
  });

  it('resumes a live run after a cut with Last-Event-ID: nothing missed, nothing repeated', async () => {
    const id = await start();
    const part = await readEvents(await events(id), { stopAfter: 4 });
    expect(part.ended).toBe(false);
    const rest = await readEvents(await events(id, { 'last-event-id': part.events.at(-1)!.id }));
    expect(rest.ended).toBe(true);
    expect(once([...part.events, ...rest.events])).toEqual(ONCE);
    expect(fold([...part.events, ...rest.events]).run).toEqual(await getRunFacts(session.db, id));
  }, 60_000);

  it('gives an ended run whole, the same from any cut; a client holding the end gets 204', async () => {
    const whole = await readEvents(await events(runId));
    expect(once(whole.events)).toEqual(ONCE);
    for (let cut = 1; cut < whole.events.length; cut++) {
      const part = await readEvents(await events(runId), { stopAfter: cut });
      const rest = await readEvents(await events(runId, { 'last-event-id': part.events.at(-1)!.id }));
      expect([...part.events, ...rest.events]).toEqual(whole.events);
    }
    expect((await events(runId, { 'last-event-id': whole.events.at(-1)!.id })).status).toBe(204);
    // ?after= for a client that cannot set headers (the run page's first connection)
    expect((await events(runId, {}, `?after=${encodeURIComponent(whole.events.at(-1)!.id)}`)).status).toBe(204);
  }, 60_000);

  it('refuses an id of no event of this run, and names runs as the other /api/runs/:id routes do', async () => {
    const bad = await events(runId, { 'last-event-id': 'garbage' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'E_EVENT_ID' });
    expect((await events('deadbeef')).status).toBe(404);
    const shortRes = await events(shortRunId(runId));
    expect(shortRes.status).toBe(200);
    const short = await readEvents(shortRes);
    expect(once(short.events)).toEqual(ONCE);
  });

  it('says it is alive while nothing happens (a comment), and stops reading when the client goes away', async () => {
    const id = '0198c0de-0000-7000-8000-00000000abcd';
    const now = Date.now();
    // a run another process runs, alive (its lease an hour away) and quiet
    await session.db.q.insert(session.db.t.runs).values({
      id,
      project: 'showcase',
      flow: 'triage',
      status: 'running',
      input: { ticket: 'quiet' },
      startedAt: now,
      owner: 'elsewhere',
      fence: 1,
      leaseExpiresAt: now + 3_600_000,
      heartbeatAt: now,
    });
    const { runEventsRoute } = await import('@/lib/server/run-events-sse');
    const req = new NextRequest(`http://localhost/api/runs/${id}/events`, { headers: LOCAL_HEADERS });
    const quiet = await readEvents(await runEventsRoute(req, Promise.resolve({ id }), { keepAliveMs: 0, pollMs: 5 }), { stopAfterComments: 2 });
    expect(quiet.events.map((e) => e.event.type)).toEqual(['run.started']);
    expect(quiet.comments).toEqual(['keep-alive', 'keep-alive']);
    expect(quiet.ended).toBe(false);
  });

  it("the run page's follow: from the facts it was rendered with mid-run, its events bring it to the run as stored", async () => {
    const id = await start();
    // the page renders once the draft streams: some of its text already in the facts it starts from
    const rendered = await eventually(
      'the draft to stream',
      async () => {
        const f = await getRunFacts(session.db, id);
        return f?.nodes.find((n) => n.id === 'draft')?.attempts.some((a) => a.seq === 2 && a.streamedText) ? f : null;
      },
      30_000,
      20,
    );
    let shown: RunDetailResponse = rendered;
    const open = routeEventSource(async (url) => {
      const { GET } = await import('@/app/api/runs/[id]/events/route');
      return GET(new NextRequest(`http://localhost${url}`, { headers: LOCAL_HEADERS }), { params: Promise.resolve({ id }) });
    });
    let es: ReturnType<ReturnType<typeof routeEventSource>> | null = null;
    const errors: boolean[] = [];
    followRunEvents(rendered, (url) => (es = open(url)), { onChange: (s) => void (shown = s.run), onError: (e) => void (e && errors.push(e)) });
    await es!.done;
    expect(shown).toEqual(await getRunFacts(session.db, id));
    expect(shown.status).toBe('succeeded');
    expect(errors).toEqual([]);
  }, 60_000);
});
