// Reads GET /api/runs/:id/events as a client would (eventsource-parser over the response body):
// the events in order, each with its id and JSON data; `stopAfter` cuts the connection after that
// many events (a dropped connection), as a client that goes away does; `stopAfterComments`, after
// that many comments (keep-alives).
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { applyRunEvent, type FollowedState, type RunEvent } from '@/lib/flow/run-events';

export interface ReadEvents {
  status: number;
  contentType: string | null;
  events: { id: string; event: RunEvent }[];
  /** SSE comments seen (keep-alives) */
  comments: string[];
  /** the stream ended by itself (not cut) */
  ended: boolean;
}

export async function readEvents(res: Response, o: { stopAfter?: number; stopAfterComments?: number } = {}): Promise<ReadEvents> {
  const out: ReadEvents = { status: res.status, contentType: res.headers.get('content-type'), events: [], comments: [], ended: false };
  if (!res.body) return { ...out, ended: true };
  const parser = createParser({
    onEvent: (m: EventSourceMessage) => void out.events.push({ id: m.id!, event: { type: m.event, data: JSON.parse(m.data) } as RunEvent }),
    onComment: (c) => void out.comments.push(c.trim()),
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    if (o.stopAfterComments !== undefined && out.comments.length >= o.stopAfterComments) {
      await reader.cancel();
      return out;
    }
    if (o.stopAfter !== undefined && out.events.length >= o.stopAfter) {
      await reader.cancel();
      out.events.length = o.stopAfter; // what arrived in the same chunk after the cut is not seen either
      return out;
    }
    const { done, value } = await reader.read();
    if (done) return { ...out, ended: true };
    parser.feed(value);
  }
}

/**
 * An EventSource (what lib/dashboard/run-follow.ts uses of one) over a route handler: `get` answers
 * the URL the page would open; its events are dispatched as the browser's would be. No reconnect.
 */
export function routeEventSource(get: (url: string) => Promise<Response>) {
  return (url: string) => {
    const listeners = new Map<string, ((ev: { data: string }) => void)[]>();
    const es = {
      readyState: 0,
      onerror: null as ((ev: Event) => unknown) | null,
      addEventListener: (type: string, f: (ev: { data: string }) => void) => void listeners.set(type, [...(listeners.get(type) ?? []), f]),
      close: () => void (es.readyState = 2),
      /** resolves when the stream has ended or was closed */
      done: null as Promise<void> | null,
    };
    es.done = (async () => {
      const res = await get(url);
      es.readyState = 1;
      const parser = createParser({ onEvent: (m) => es.readyState !== 2 && listeners.get(m.event ?? 'message')?.forEach((f) => f({ data: m.data })) });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      while (es.readyState !== 2) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      await reader.cancel();
      es.readyState = 2;
    })();
    return es;
  };
}

/** An event as a line — its type, node and attempt (`attempt.ended draft 1`) — of the events a run has once each (text, tries and pauses come in as many pieces as the reads make). */
export function onceLabels(events: { event: RunEvent }[]): string[] {
  return events
    .filter((e) => !['attempt.text', 'attempt.try', 'pause'].includes(e.event.type))
    .map((e) => {
      const d = e.event.data as { node?: string; id?: string; seq?: number };
      return [e.event.type, d.node ?? (e.event.type.startsWith('node.') ? d.id : undefined), d.seq].filter((x) => x !== undefined).join(' ');
    });
}

/** Those lines for a showcase triage run that succeeds: classify's and draft's attempts, manual_review never reached. */
export function triageOnce(o: { queued?: boolean; classify: number; draft: number }): string[] {
  const attempts = (node: string, n: number) => Array.from({ length: n }, (_, i) => [`attempt.started ${node} ${i + 1}`, `attempt.ended ${node} ${i + 1}`]).flat();
  const node = (id: string, n: number) => [`node.started ${id}`, ...attempts(id, n), `node.ended ${id}`];
  return [...(o.queued ? ['run.queued'] : []), 'run.started', ...node('classify', o.classify), ...node('draft', o.draft), 'node.ended manual_review', 'run.ended'];
}

/** The facts a client holds after `events`, from nothing. */
export function foldEvents(events: { event: RunEvent }[]): FollowedState {
  return events.reduce((s, e) => applyRunEvent(s, e.event), { run: null, pauses: [] } as FollowedState);
}
