// A run's events from its stored facts (lib/flow/run-events.ts): a run read at successive moments
// gives its events once each, in order; folding them gives the facts back; a client that resumes
// from any event's id misses nothing and is sent nothing twice; an attempt's text is tagged by
// attempt, starts afresh when its stream does, and is marked discarded when the attempt is.
import { describe, expect, it } from 'vitest';
import type { AttemptFacts, NodeFacts } from '@/db/types';
import { decodeCursor, encodeCursor, startCursor } from './run-event-cursor';
import { openApiDocument } from '@/lib/contracts/openapi';
import { RUN_EVENTS } from '@/lib/contracts/run-event-schemas';
import { applyRunEvent, cursorOf, nextEvents, RUN_EVENT_TYPES, type FollowedRun, type FollowedState, type IdentifiedEvent, type RunEvent, type SeenPause } from './run-events';

const RUN = '0198c0de-0000-7000-8000-000000000001';
const M = 'sim:fast';
const ZERO = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

function attempt(seq: number, over: Partial<AttemptFacts> = {}): AttemptFacts {
  return {
    seq,
    model: M,
    chainIndex: 0,
    answerNo: seq,
    outcome: null,
    finishReason: null,
    nativeFinishReason: null,
    cause: null,
    action: 'none',
    request: [{ role: 'user', content: 'hi' }],
    responseText: null,
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage: ZERO,
    costSource: null,
    startedAt: 1000 + seq,
    finishedAt: null,
    tries: [],
    ...over,
  };
}

function node(id: string, over: Partial<NodeFacts> = {}): NodeFacts {
  return { id, agent: id, turn: 1, status: 'running', output: null, error: null, policy: null, attempts: [], startedAt: 1000, finishedAt: null, ...over };
}

function run(over: Partial<FollowedRun> = {}): FollowedRun {
  return {
    id: RUN,
    flow: 'triage',
    status: 'running',
    input: { ticket: 't' },
    output: null,
    error: null,
    turns: 1,
    startedAt: 1000,
    finishedAt: null,
    nodes: [],
    startedBy: 'cli:ana',
    projectHash: null,
    snapshotId: null,
    kind: 'flow',
    replayOf: null,
    replayNode: null,
    ...over,
  };
}

const rateLimited = { tryNo: 1, status: 429, error: 'rate_limited' as const, retryAfterMs: 500, waitedMs: 0, discardedText: null, startedAt: 1001, finishedAt: 1002 };
const okTry = (tryNo: number) => ({ tryNo, status: 200, error: null, retryAfterMs: null, waitedMs: 500, discardedText: null, startedAt: 1503, finishedAt: 1600 });

/** the draft's first attempt as it ended: its stream broke once, its answer failed its schema and was repaired */
const repaired = attempt(1, {
  tries: [rateLimited, { ...okTry(2), error: 'connection', discardedText: 'Dear customer, we' }, okTry(3)],
  streamedText: 'Hello {',
  outcome: 'ok',
  cause: 'invalid_output',
  action: 'repair',
  discarded: true,
  finishedAt: 1700,
});

/** the run as read at successive moments: queued; a rate-limited try and a pause; a stream that breaks and starts afresh; a repair; the end */
const moments: { run: FollowedRun; pauses: SeenPause[] }[] = [
  { run: run({ status: 'queued' }), pauses: [] },
  {
    run: run({ nodes: [node('draft', { attempts: [attempt(1, { tries: [rateLimited] })] })] }),
    pauses: [{ model: M, pausedUntil: 1502, reason: '429', origin: { setAt: 1002, serverWait: '0.5', askedMs: 500, maxWaitMs: 60_000 } }],
  },
  { run: run({ nodes: [node('draft', { attempts: [attempt(1, { tries: [rateLimited], streamedText: 'Dear cust' })] })] }), pauses: [] },
  // the connection broke: its text is on the try; the attempt's starts afresh
  {
    run: run({
      nodes: [
        node('draft', {
          attempts: [attempt(1, { tries: [rateLimited, { ...okTry(2), status: 200, error: 'connection', discardedText: 'Dear customer, we' }], streamedText: 'Hel' })],
        }),
      ],
    }),
    pauses: [],
  },
  {
    run: run({
      nodes: [
        node('draft', {
          attempts: [repaired, attempt(2, { streamedText: '{"a": 1, "to": "<EMAIL>' })],
        }),
      ],
    }),
    pauses: [],
  },
];
const endNodes = [
  node('draft', {
    status: 'succeeded',
    output: { a: 1 },
    finishedAt: 1900,
    attempts: [
      repaired,
      // the raw answer replaces the redacted batches at the end
      attempt(2, { tries: [okTry(1)], streamedText: '{"a": 1, "to": "ana@example.com"}', outcome: 'ok', responseText: '{"a": 1}', finishedAt: 1850 }),
    ],
  }),
  node('notify', { turn: 0, status: 'skipped', startedAt: 1900, finishedAt: 1900 }),
];
moments.push({ run: run({ status: 'succeeded', output: { a: 1 }, turns: 1, finishedAt: 1950, nodes: endNodes }), pauses: [] });
const last = moments.at(-1)!.run;

/** every moment read in turn from `from` (a cursor), the events of each */
function follow(from: string | null, start = 0): IdentifiedEvent[] {
  const c = from ? decodeCursor(from, RUN)! : startCursor(RUN);
  return moments.slice(start).flatMap((m) => nextEvents(c, m.run, m.pauses));
}

const fold = (events: { event: RunEvent }[], s: FollowedState = { run: null, pauses: [] }) => events.reduce((st, e) => applyRunEvent(st, e.event), s);

describe('a run followed from its stored facts', () => {
  const all = follow(null);

  it('gives each fact once, in the order a run has them', () => {
    expect(all.map((e) => `${e.event.type}${'seq' in e.event.data ? ` ${String(e.event.data.seq)}` : ''}`)).toEqual([
      'run.queued',
      'run.started',
      'node.started',
      'attempt.started 1',
      'attempt.try 1',
      'pause',
      'attempt.text 1',
      'attempt.try 1',
      'attempt.text 1',
      'attempt.try 1',
      'attempt.text 1',
      'attempt.ended 1',
      'attempt.started 2',
      'attempt.text 2',
      'attempt.try 2',
      'attempt.text 2',
      'attempt.ended 2',
      'node.ended',
      'node.ended',
      'run.ended',
    ]);
    // each id is the cursor after its event, and ids never repeat
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  });

  it('tags text by attempt: appended while it grows, whole when the stream starts afresh or the answer replaces it', () => {
    const texts = all.filter((e) => e.event.type === 'attempt.text').map((e) => e.event.data);
    expect(texts).toEqual([
      { node: 'draft', seq: 1, from: 0, text: 'Dear cust' },
      { node: 'draft', seq: 1, from: 0, text: 'Hel' },
      { node: 'draft', seq: 1, from: 3, text: 'lo {' },
      // the stored batches are redacted; the answer's own text, as received, replaces them
      { node: 'draft', seq: 2, from: 0, text: '{"a": 1, "to": "<EMAIL>' },
      { node: 'draft', seq: 2, from: 0, text: '{"a": 1, "to": "ana@example.com"}' },
    ]);
    const ended = all.find((e) => e.event.type === 'attempt.ended')!.event.data;
    expect(ended).toMatchObject({ node: 'draft', seq: 1, discarded: true, action: 'repair', cause: 'invalid_output' });
  });

  it('folds back into the facts as stored', () => {
    expect(fold(all)).toEqual({ run: last, pauses: [moments[1]!.pauses[0]] });
  });

  it('resumes after any event with nothing repeated and nothing lost', () => {
    // the moment each event was read at: a client cut after event k reconnects at that moment or later
    const momentOf: number[] = [];
    const c = startCursor(RUN);
    moments.forEach((m, j) => nextEvents(c, m.run, m.pauses).forEach(() => momentOf.push(j)));
    for (let k = 0; k < all.length; k++) {
      for (const back of [momentOf[k]!, Math.min(momentOf[k]! + 1, moments.length - 1), moments.length - 1]) {
        const rest = follow(all[k]!.id, back);
        const got = fold(rest, fold(all.slice(0, k + 1)));
        expect(got.run).toEqual(last);
        const once = ['run.queued', 'run.started', 'node.started', 'attempt.started', 'attempt.ended', 'node.ended', 'run.ended'];
        const count = (es: IdentifiedEvent[]) => once.map((t) => es.filter((e) => e.event.type === t).length);
        expect(count([...all.slice(0, k + 1), ...rest])).toEqual(count(all));
      }
    }
  });

  it('starts where a client holding the facts stands (the run page), and after the end sends nothing', () => {
    const c = decodeCursor(cursorOf(moments[2]!.run, moments[1]!.pauses), RUN)!;
    const rest = moments.slice(3).flatMap((m) => nextEvents(c, m.run, m.pauses));
    expect(fold(rest, { run: moments[2]!.run, pauses: [] }).run).toEqual(last);
    expect(rest.filter((e) => e.event.type === 'pause')).toEqual([]);
    expect(nextEvents(c, last, [])).toEqual([]);
  });

  it('refuses a cursor of another run, or one that is not a cursor', () => {
    expect(decodeCursor(encodeCursor(startCursor('another')), RUN)).toBeNull();
    expect(decodeCursor('not-a-cursor', RUN)).toBeNull();
    expect(decodeCursor(Buffer.from('{"i":"x","r":9}').toString('base64url'), 'x')).toBeNull();
    expect(decodeCursor(encodeCursor(startCursor(RUN)), RUN)).toEqual(startCursor(RUN));
  });

  it('keeps a node named like a member of Object.prototype apart', () => {
    const c = startCursor(RUN);
    const events = nextEvents(c, run({ nodes: [node('__proto__', { attempts: [attempt(1)] })] }), []);
    expect(events.map((e) => e.event.type)).toEqual(['run.started', 'node.started', 'attempt.started']);
    expect(Object.getPrototypeOf(c.n)).toBe(Object.prototype);
    expect(decodeCursor(events.at(-1)!.id, RUN)!.n).toHaveProperty(['__proto__']);
  });

  it('a run cancelled while queued ends without starting', () => {
    const c = startCursor(RUN);
    expect([...nextEvents(c, run({ status: 'queued' }), []), ...nextEvents(c, run({ status: 'cancelled', finishedAt: 2000 }), [])].map((e) => e.event.type)).toEqual([
      'run.queued',
      'run.ended',
    ]);
  });

  it('gives each event the shape the API documents (GET /api/openapi.json: every name, each data schema)', () => {
    for (const { event } of all) expect(RUN_EVENTS[event.type].safeParse(event.data).error, event.type).toBeUndefined();
    const doc = openApiDocument() as { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { 'x-events': object }> }> } }> };
    const stream = doc.paths['/api/runs/{id}/events']!.get.responses['200']!.content['text/event-stream']!;
    expect(Object.keys(stream['x-events'])).toEqual([...RUN_EVENT_TYPES]);
    // a shape the document refuses: an attempt's event without its node
    const { node: _node, ...headless } = all.find((e) => e.event.type === 'attempt.ended')!.event.data as { node: string };
    expect(RUN_EVENTS['attempt.ended'].safeParse(headless).success).toBe(false);
  });
});
