// A run's events (DESIGN: "A run's events"): what its record will hold, as it comes — the run
// queued, started and ended, each node started and ended, each attempt started, its tries (the
// waits: status, retry-after, waited), its streamed text and its end (outcome, cause, action,
// discarded), and the rate-limit pauses (with their origin) that hold an attempt of it in flight.
// Pure: `nextEvents` is the difference between what a client was sent (a Cursor) and the run's
// stored facts now; `applyRunEvent` folds events into the facts the client holds. The same events
// feed GET /api/runs/:id/events, the run page and `aqven show --follow` (lib/flow/run-event-source.ts
// reads them from the database, for every process and both dialects).
import type { RunLink, RunOrigin } from '@/db/queries';
import type { AttemptFacts, NodeFacts, RunFacts, RunStatus } from '@/db/types';
import { RUN_EVENT_NAMES, RUN_EVENTS } from '@/lib/contracts/run-event-schemas';
import type { PauseOrigin } from '@/lib/engine/types';
import { encodeCursor, startCursor, textHash, type AttemptMark, type Cursor, type NodeMark } from './run-event-cursor';

/** a run as the events build it: its stored facts (GET /api/runs/:id/detail's shape) */
export type FollowedRun = RunFacts & RunOrigin & Partial<RunLink>;
export type RunHead = Omit<FollowedRun, 'nodes' | 'output' | 'error' | 'finishedAt'>;
export type NodeHead = Omit<NodeFacts, 'attempts'>;
/** an attempt's row without its tries and text (those come as their own events) */
export type AttemptHead = Omit<AttemptFacts, 'tries' | 'streamedText'> & { node: string };
export type TryFacts = AttemptFacts['tries'][number];
export type RunEnd = Pick<RunFacts, 'status' | 'output' | 'error' | 'turns' | 'finishedAt'>;

/** a rate-limit pause on the model of an attempt in flight (db/pause-queries.ts StoredPause) */
export interface SeenPause {
  model: string;
  pausedUntil: number;
  reason: string;
  origin: PauseOrigin | null;
}

export type RunEvent =
  | { type: 'run.queued'; data: RunHead }
  | { type: 'run.started'; data: RunHead }
  | { type: 'node.started'; data: NodeHead }
  | { type: 'attempt.started'; data: AttemptHead }
  | { type: 'attempt.try'; data: { node: string; seq: number; try: TryFacts } }
  /** the attempt's streamed text is `text` from character `from` on: 0 replaces it, else it appends */
  | { type: 'attempt.text'; data: { node: string; seq: number; from: number; text: string } }
  | { type: 'attempt.ended'; data: AttemptHead }
  | { type: 'node.ended'; data: NodeHead }
  | { type: 'pause'; data: SeenPause }
  | { type: 'run.ended'; data: RunEnd };

export type RunEventType = RunEvent['type'];
/** the names the API documents (lib/contracts/run-event-schemas.ts): exactly these, both ways */
export const RUN_EVENT_TYPES: readonly RunEventType[] = RUN_EVENT_NAMES satisfies readonly RunEventType[];
const _everyTypeNamed: Record<RunEventType, unknown> = RUN_EVENTS;
void _everyTypeNamed;

/** an event and its id: the cursor after it */
export interface IdentifiedEvent {
  id: string;
  event: RunEvent;
}

/** a run's stage: 1 queued, 2 running, 3 over */
const runStage = (s: RunStatus): 1 | 2 | 3 => (s === 'queued' ? 1 : s === 'running' ? 2 : 3);
const nodeOver = (n: NodeFacts) => n.status !== 'running' && n.status !== 'pending';
const attemptOver = (a: AttemptFacts) => a.outcome != null || a.finishedAt != null;

/** the record's own entry (a node named `__proto__` is a name like any other) */
function put<T>(rec: Record<string, T>, key: string, v: T): T {
  Object.defineProperty(rec, key, { value: v, enumerable: true, writable: true, configurable: true });
  return v;
}
const got = <T>(rec: Record<string, T>, key: string): T | undefined => (Object.hasOwn(rec, key) ? rec[key] : undefined);

function runHead(r: FollowedRun): RunHead {
  const { nodes: _n, output: _o, error: _e, finishedAt: _f, ...head } = r;
  return head;
}

function nodeHead(n: NodeFacts): NodeHead {
  const { attempts: _a, ...head } = n;
  return head;
}

function attemptHead(node: string, a: AttemptFacts): AttemptHead {
  const { tries: _t, streamedText: _s, ...head } = a;
  return { node, ...head };
}

type Push = (event: RunEvent) => void;

/** The text event that brings a client from what it was sent (mark) to `text`, if any; the mark follows. */
function textEvent(node: string, a: AttemptFacts, m: AttemptMark, push: Push): void {
  const text = a.streamedText ?? '';
  const sent = m[2];
  if (text.length === sent && textHash(text) === m[3]) return;
  // a client whose text is no longer a prefix (a re-try's fresh stream, the raw answer at the end) gets it whole
  const grows = text.length > sent && textHash(text.slice(0, sent)) === m[3];
  m[2] = text.length;
  m[3] = textHash(text);
  push({ type: 'attempt.text', data: grows ? { node, seq: a.seq, from: sent, text: text.slice(sent) } : { node, seq: a.seq, from: 0, text } });
}

/** An attempt's events since its mark: started, the tries not sent, its text, its end. */
function attemptEvents(node: string, nm: NodeMark, a: AttemptFacts, push: Push): void {
  const key = String(a.seq);
  let m = got(nm[2], key);
  if (!m) {
    m = put(nm[2], key, [1, 0, 0, textHash('')]);
    push({ type: 'attempt.started', data: attemptHead(node, a) });
  }
  for (const t of a.tries.slice(m[1])) {
    m[1]++;
    push({ type: 'attempt.try', data: { node, seq: a.seq, try: t } });
  }
  textEvent(node, a, m, push);
  if (m[0] === 1 && attemptOver(a)) {
    m[0] = 2;
    // ended and sent whole: folded into the node's count, so a cursor stays short
    while (got(nm[2], String(nm[1] + 1))?.[0] === 2) delete nm[2][String(++nm[1])];
    push({ type: 'attempt.ended', data: attemptHead(node, a) });
  }
}

function nodeEvents(c: Cursor, n: NodeFacts, push: Push): void {
  const m = got(c.n, n.id) ?? put(c.n, n.id, [0, 0, {}]);
  if (m[0] === 0 && n.status !== 'skipped') {
    m[0] = 1;
    push({ type: 'node.started', data: nodeHead({ ...n, status: 'running', output: null, error: null, finishedAt: null }) });
  }
  for (const a of n.attempts) if (a.seq > m[1]) attemptEvents(n.id, m, a, push);
  if (m[0] < 2 && nodeOver(n)) {
    m[0] = 2;
    push({ type: 'node.ended', data: nodeHead(n) });
  }
}

/**
 * The events a client at cursor `c` has not been sent of `run` as stored now, in order — the run's
 * head, each node (its attempts' starts, tries, text and ends, then its own end), the pauses on the
 * models of its attempts in flight, the run's end — each with its id. `c` is advanced.
 */
export function nextEvents(c: Cursor, run: FollowedRun, pauses: readonly SeenPause[]): IdentifiedEvent[] {
  const out: IdentifiedEvent[] = [];
  const push: Push = (event) => out.push({ id: encodeCursor(c), event });
  const stage = runStage(run.status);
  if (c.r < 1 && stage === 1) {
    c.r = 1;
    push({ type: 'run.queued', data: runHead(run) });
  }
  // a run cancelled while queued never started
  if (c.r < 2 && stage >= 2 && run.status !== 'cancelled') {
    c.r = 2;
    push({ type: 'run.started', data: runHead({ ...run, status: 'running' }) });
  }
  for (const n of run.nodes) nodeEvents(c, n, push);
  const inFlight = new Set(run.nodes.flatMap((n) => n.attempts.filter((a) => !attemptOver(a)).map((a) => a.model)));
  for (const p of pauses) {
    if (!inFlight.has(p.model) || p.pausedUntil <= (got(c.p, p.model) ?? 0)) continue;
    put(c.p, p.model, p.pausedUntil);
    push({ type: 'pause', data: p });
  }
  if (c.r < 3 && stage === 3) {
    c.r = 3;
    const { status, output, error, turns, finishedAt } = run;
    push({ type: 'run.ended', data: { status, output, error, turns, finishedAt } });
  }
  return out;
}

/** The id of the last event a client holding `run` (and `pauses`) has had: where its stream goes on from. */
export function cursorOf(run: FollowedRun, pauses: readonly SeenPause[] = []): string {
  const c = startCursor(run.id);
  nextEvents(c, run, pauses);
  return encodeCursor(c);
}

/** What a client holds of a followed run: its facts (null before its first event) and the pauses it was told of. */
export interface FollowedState {
  run: FollowedRun | null;
  pauses: SeenPause[];
}

/** never reached (turn 0) last, else by turn; arrival order within a turn */
const byTurn = (x: NodeFacts, y: NodeFacts) => (x.turn === 0 ? 1 : 0) - (y.turn === 0 ? 1 : 0) || x.turn - y.turn;

function withNode(run: FollowedRun, id: string, f: (n: NodeFacts | undefined) => NodeFacts): FollowedRun {
  const i = run.nodes.findIndex((n) => n.id === id);
  const nodes = [...run.nodes];
  if (i < 0) nodes.push(f(undefined));
  else nodes[i] = f(nodes[i]);
  return { ...run, nodes: nodes.sort(byTurn), turns: Math.max(run.turns, ...nodes.map((n) => n.turn)) };
}

function withAttempt(run: FollowedRun, node: string, seq: number, f: (a: AttemptFacts | undefined) => AttemptFacts): FollowedRun {
  return withNode(run, node, (n) => {
    if (!n) throw new Error(`an event of attempt ${seq} of node ${node}, before the node's own`);
    const i = n.attempts.findIndex((a) => a.seq === seq);
    const attempts = [...n.attempts];
    if (i < 0) attempts.push(f(undefined));
    else attempts[i] = f(attempts[i]);
    return { ...n, attempts: attempts.sort((x, y) => x.seq - y.seq) };
  });
}

function attemptOf(head: AttemptHead, a: AttemptFacts | undefined): AttemptFacts {
  const { node: _node, ...rest } = head;
  return { ...rest, streamedText: a?.streamedText ?? null, tries: a?.tries ?? [] };
}

/** The run's facts after event `e` (the record the client holds, as getRunFacts would read it; new objects, for React). */
export function applyRunEvent(s: FollowedState, e: RunEvent): FollowedState {
  if (e.type === 'pause') return { ...s, pauses: [...s.pauses.filter((p) => p.model !== e.data.model), e.data] };
  if (e.type === 'run.queued' || e.type === 'run.started') {
    const base = s.run ?? { nodes: [], output: null, error: null, finishedAt: null };
    return { ...s, run: { ...base, ...e.data } };
  }
  if (!s.run) throw new Error(`a ${e.type} event before the run's own`);
  const run = s.run;
  switch (e.type) {
    case 'run.ended':
      return { ...s, run: { ...run, ...e.data } };
    case 'node.started':
    case 'node.ended':
      return { ...s, run: withNode(run, e.data.id, (n) => ({ ...e.data, attempts: n?.attempts ?? [] })) };
    case 'attempt.started':
    case 'attempt.ended':
      return { ...s, run: withAttempt(run, e.data.node, e.data.seq, (a) => attemptOf(e.data, a)) };
    case 'attempt.try': {
      const t = e.data.try;
      const tries = (a: AttemptFacts) => [...a.tries.filter((x) => x.tryNo !== t.tryNo), t].sort((x, y) => x.tryNo - y.tryNo);
      return { ...s, run: withAttempt(run, e.data.node, e.data.seq, (a) => ({ ...a!, tries: tries(a!) })) };
    }
    case 'attempt.text': {
      const { from, text } = e.data;
      return { ...s, run: withAttempt(run, e.data.node, e.data.seq, (a) => ({ ...a!, streamedText: (a!.streamedText ?? '').slice(0, from) + text })) };
    }
  }
}
