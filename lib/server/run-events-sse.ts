// GET /api/runs/:id/events (DESIGN: "A run's events"): a run's events as Server-Sent Events —
// `id:` (the cursor after the event), `event:` (its type), `data:` (its JSON) — read from the
// database by followRun, so a run another process or a worker runs is followed alike. A client
// resumes after a dropped connection with `Last-Event-ID` (EventSource sends it by itself) or
// `?after=` (the run page, which starts from the facts it was rendered with). Auth and run ids as
// every /api/runs/:id route (routedRun). The stream ends after `run.ended`; a client whose cursor
// already holds the end gets 204, which tells EventSource not to reconnect.
import 'server-only';
import { getRunFacts } from '@/db/queries';
import { EVENT_ID_CODE } from '@/lib/contracts/run-event-schemas';
import { decodeCursor } from '@/lib/flow/run-event-cursor';
import { followRun, type FollowItem, type FollowOptions } from '@/lib/flow/run-event-source';
import { apiRefusal } from './api-refusal';
import { routedRun } from './run-route';

/** how long EventSource waits before it reconnects (the `retry:` field) */
export const RECONNECT_MS = 1000;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx and its kin hold a response back unless told not to
  'x-accel-buffering': 'no',
} as const;

/** One item as SSE text. JSON has no raw line breaks, so each event's data is one `data:` line. */
export function sseText(item: FollowItem): string {
  if (item.kind === 'keep-alive') return ': keep-alive\n\n';
  if (item.kind === 'gone') return 'event: gone\ndata: {"error":"the run is no longer stored"}\n\n';
  return `id: ${item.id}\nevent: ${item.event.type}\ndata: ${JSON.stringify(item.event.data)}\n\n`;
}

/** The stream of `items`, ended by the generator or by the client going away (`signal`). */
function sseStream(items: AsyncGenerator<FollowItem>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let cancelled = false;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(enc.encode(`retry: ${RECONNECT_MS}\n\n`));
    },
    async pull(controller) {
      let next: IteratorResult<FollowItem>;
      try {
        next = await items.next();
      } catch (err) {
        if (cancelled) return;
        // the database went away mid-stream: the client reconnects from its last id
        console.error(`aqven: a run's event stream stopped: ${err instanceof Error ? err.message : String(err)}`);
        return controller.error(err);
      }
      // the client went away while the next read was under way
      if (cancelled) return;
      if (next.done) controller.close();
      else controller.enqueue(enc.encode(sseText(next.value)));
    },
    async cancel() {
      cancelled = true;
      await items.return(undefined);
    },
  });
}

/** The route's answer: the caller and run checked, the cursor read, then the stream. `follow` overrides polling (tests). */
export async function runEventsRoute(req: Request, params: Promise<{ id: string }>, follow: Omit<FollowOptions, 'after' | 'signal'> = {}): Promise<Response> {
  const routed = await routedRun(req, params, getRunFacts);
  if (routed instanceof Response) return routed;
  const given = req.headers.get('last-event-id') ?? new URL(req.url).searchParams.get('after');
  const after = given ? decodeCursor(given, routed.runId) : null;
  if (given && !after) return apiRefusal(400, { code: EVENT_ID_CODE, message: 'Last-Event-ID (or ?after=) is not the id of an event of this run' });
  if (after?.r === 3) return new Response(null, { status: 204 });
  const items = followRun(routed.db, routed.runId, { ...follow, after, signal: req.signal });
  return new Response(sseStream(items), { status: 200, headers: SSE_HEADERS });
}
