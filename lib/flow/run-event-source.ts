// A run's events read from the database (DESIGN: "A run's events"), for any process and both
// dialects: the run's stored facts are read every POLL_MS (the run store writes them behind within
// FLUSH_MS; streamed text lands in stream_chunks rows, then whole in attempts.streamed_text) and the
// difference with what the client was sent becomes events (nextEvents). A keep-alive when nothing
// happened for KEEP_ALIVE_MS; the events end with the run's. One source for GET
// /api/runs/:id/events (lib/server/run-events-sse.ts), the run page (through that route) and
// `aqven show --follow` (lib/cli/follow.ts).
import { sweepBeforeRead } from '@/db/client';
import { activePauses } from '@/db/pause-queries';
import { getRunFacts } from '@/db/queries';
import type { Db } from '@/db/types';
import { startCursor, type Cursor } from './run-event-cursor';
import { nextEvents, type RunEvent } from './run-events';

/** how often a followed run is read */
export const POLL_MS = 250;
/** a comment this long after the last thing sent, so proxies and clients know the stream is alive */
export const KEEP_ALIVE_MS = 15_000;

export type FollowItem = { kind: 'event'; id: string; event: RunEvent } | { kind: 'keep-alive' } | { kind: 'gone' };

export interface FollowOptions {
  /** where the client stands (a decoded Last-Event-ID); from the start when absent */
  after?: Cursor | null;
  pollMs?: number;
  keepAliveMs?: number;
  now?: () => number;
  /** resolves after `ms`, or early once `signal` aborts */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** the client went away: the reads stop */
  signal?: AbortSignal;
}

/** resolves after `ms`, or early once `signal` aborts */
export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The events of run `runId` from `after` on, as they are stored, until the run has ended (its
 * `run.ended` is the last); `keep-alive` after a quiet KEEP_ALIVE_MS; `gone` when the run is no
 * longer there (purged, or never was). A dead SQLite owner's run is swept as every read of the
 * history does (sweepBeforeRead), so it ends as interrupted rather than never.
 */
export async function* followRun(db: Db, runId: string, o: FollowOptions = {}): AsyncGenerator<FollowItem> {
  const c = o.after ?? startCursor(runId);
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? sleepFor;
  const pollMs = o.pollMs ?? POLL_MS;
  const keepAliveMs = o.keepAliveMs ?? KEEP_ALIVE_MS;
  let lastSent = now();
  while (!o.signal?.aborted) {
    await sweepBeforeRead(db, now());
    const run = await getRunFacts(db, runId);
    if (!run) {
      yield { kind: 'gone' };
      return;
    }
    const inFlight = run.nodes.some((n) => n.attempts.some((a) => a.outcome == null && a.finishedAt == null));
    const pauses = inFlight ? await activePauses(db, now()) : [];
    for (const { id, event } of nextEvents(c, run, pauses)) {
      lastSent = now();
      yield { kind: 'event', id, event };
    }
    if (c.r === 3) return;
    if (now() - lastSent >= keepAliveMs) {
      lastSent = now();
      yield { kind: 'keep-alive' };
    }
    await sleep(pollMs, o.signal);
  }
}
