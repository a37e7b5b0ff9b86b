// The run page's live data (DESIGN: "A run's events"; The run page, "The live run page"): the run's
// events from GET /api/runs/:id/events, folded into the facts the page was rendered with
// (applyRunEvent) — the same source as the API's clients and `aqven show --follow`. The stream
// starts after those facts (`?after=` their cursor); EventSource reconnects by itself with
// Last-Event-ID; the stream is closed at `run.ended`. No React here: the hook (components/runs/
// use-runs.ts) gives it `new EventSource`, a test an EventSource over the real route.
import type { RunDetailResponse } from './api-types';
import { applyRunEvent, cursorOf, RUN_EVENT_TYPES, type FollowedState, type RunEvent } from '@/lib/flow/run-events';

/** What of the browser's EventSource the follow uses. */
export interface EventSourceLike {
  addEventListener(type: string, listener: (ev: { data: string }) => void): void;
  onerror: ((ev: Event) => unknown) | null;
  readonly readyState: number;
  close(): void;
}

/** EventSource.CLOSED: it will not reconnect (an HTTP error, a 204) */
const CLOSED = 2;

export interface RunFollow {
  /** the facts as they stand, and the pauses told of */
  onChange(s: FollowedState & { run: RunDetailResponse }): void;
  /** true: the stream failed and will not come back (the page says it shows the last data); false: data flows again */
  onError(failed: boolean): void;
}

/** The events URL of a run whose facts the page holds. */
export function eventsUrl(initial: RunDetailResponse): string {
  return `/api/runs/${encodeURIComponent(initial.id)}/events?after=${encodeURIComponent(cursorOf(initial))}`;
}

/** Follows the run of `initial` through `open(url)`; returns the stop (the page unmounts). */
export function followRunEvents(initial: RunDetailResponse, open: (url: string) => EventSourceLike, to: RunFollow): () => void {
  let state: FollowedState = { run: initial, pauses: [] };
  const es = open(eventsUrl(initial));
  const on = (type: RunEvent['type']) => (ev: { data: string }) => {
    state = applyRunEvent(state, { type, data: JSON.parse(ev.data) } as RunEvent);
    to.onError(false);
    to.onChange(state as FollowedState & { run: RunDetailResponse });
    if (type === 'run.ended') es.close();
  };
  for (const type of RUN_EVENT_TYPES) es.addEventListener(type, on(type));
  es.onerror = () => to.onError(es.readyState === CLOSED);
  return () => es.close();
}
