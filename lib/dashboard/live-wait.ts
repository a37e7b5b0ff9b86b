// What an attempt in flight is doing right now, from what is stored while it runs (DESIGN: The
// dashboard, "The live run page"). A transport try is recorded when it ends (transport_tries), a
// 429 pauses the model in rate_limit_pauses at once, and nothing is written while the next try
// waits. So the page knows:
// - after a 429 (or a rate-limit error event): the model's pause, until when → a countdown;
// - after another transient failure with a server wait (retry-after): the try's end + that wait → a countdown;
// - after one without a server wait: only that a backoff was drawn — its bounds follow from the
//   provider's transport.backoff and the failures so far (up to `jitter` taken off), the drawn
//   value is not stored → a range, never a made-up countdown;
// - otherwise: a try is in flight (its bytes are not stored until it ends, streams aside).
// Pure: the run page calls it on every render with the current time.
import { transportBackoffRange } from '@/lib/engine/backoff';
import type { TransportBackoff } from '@/lib/engine/types';
import type { AttemptFacts, TryFacts } from './run-view';

export interface PauseLite {
  model: string;
  pausedUntil: number;
}

/** A provider's transport.backoff, as the engine uses it (lib/engine/backoff.ts). */
export type BackoffConfig = TransportBackoff;

export type LiveWait =
  /** the next try goes at `until` (a pause, or a server wait) */
  | { kind: 'countdown'; why: 'rate-limit' | 'retry-after'; nextTry: number; from: number; until: number }
  /** a backoff drawn between `earliest` and `latest`; its value is not stored */
  | { kind: 'backoff'; nextTry: number; from: number; earliest: number; latest: number }
  /** a backoff whose bounds are not known here (no provider settings) */
  | { kind: 'backoff-unknown'; nextTry: number; from: number }
  /** try `tryNo` is in flight (sent, or at the gate for a free slot) */
  | { kind: 'in-flight'; tryNo: number }
  /** the last try answered: the answer is being read and checked */
  | { kind: 'checking' };

/** The attempt is between tries, waiting (a countdown or a backoff), not sending. */
export function isWaiting(w: LiveWait | null): w is Extract<LiveWait, { from: number }> {
  return w != null && (w.kind === 'countdown' || w.kind === 'backoff' || w.kind === 'backoff-unknown');
}

const rateLimited = (t: TryFacts) => t.status === 429 || t.error === 'rate_limited';
const failed = (t: TryFacts) => t.error != null || (t.status != null && t.status >= 400);

/** The current state of attempt `a` at `now`; null when it has ended. */
export function liveWait(a: AttemptFacts, now: number, pauses: PauseLite[], backoff: BackoffConfig | null): LiveWait | null {
  if (a.outcome != null || a.finishedAt != null) return null;
  const tries = [...a.tries].sort((x, y) => x.tryNo - y.tryNo);
  const last = tries[tries.length - 1];
  const pause = pauses.find((p) => p.model === a.model && p.pausedUntil > now);
  if (!last) {
    // the first try waits at the model's gate while the model is paused (another call's 429)
    return pause ? { kind: 'countdown', why: 'rate-limit', nextTry: 1, from: a.startedAt, until: pause.pausedUntil } : { kind: 'in-flight', tryNo: 1 };
  }
  if (!failed(last)) return { kind: 'checking' };
  const nextTry = last.tryNo + 1;
  const from = last.finishedAt;
  if (rateLimited(last)) {
    // the wait is served at the gate: the pause, or the server's wait when the pause is gone or was not announced
    const until = pause?.pausedUntil ?? (last.retryAfterMs != null ? from + last.retryAfterMs : null);
    return until != null && until > now ? { kind: 'countdown', why: 'rate-limit', nextTry, from, until } : { kind: 'in-flight', tryNo: nextTry };
  }
  if (last.retryAfterMs != null) {
    // the server's wait is slept as asked; a pause of the model may hold the try longer at the gate
    const until = Math.max(from + last.retryAfterMs, pause?.pausedUntil ?? 0);
    return until > now
      ? { kind: 'countdown', why: pause && pause.pausedUntil > from + last.retryAfterMs ? 'rate-limit' : 'retry-after', nextTry, from, until }
      : { kind: 'in-flight', tryNo: nextTry };
  }
  if (!backoff) return { kind: 'backoff-unknown', nextTry, from };
  // transportBackoffMs(k): base × factor^k at most cap, up to jitter taken off; k counts the other transient failures before this one
  const k = tries.filter((t) => failed(t) && !rateLimited(t)).length - 1;
  const { minMs, maxMs } = transportBackoffRange(k, backoff);
  const earliest = from + minMs;
  const latest = from + maxMs;
  if (now >= latest) return pause ? { kind: 'countdown', why: 'rate-limit', nextTry, from, until: pause.pausedUntil } : { kind: 'in-flight', tryNo: nextTry };
  return { kind: 'backoff', nextTry, from, earliest, latest };
}

/** Seconds with one decimal: "1.4 s"; minutes past a minute: "2 m 05 s". */
export function fmtLeft(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} m ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
}

/** The words the page shows for a wait at `now`: "next try in 1.4 s". */
export function waitText(w: LiveWait, now: number): string {
  switch (w.kind) {
    case 'countdown':
      return `next try in ${fmtLeft(w.until - now)}`;
    case 'backoff':
      return now < w.earliest ? `next try in ${fmtLeft(w.earliest - now)}–${fmtLeft(w.latest - now)}` : `next try any moment (within ${fmtLeft(w.latest - now)})`;
    case 'backoff-unknown':
      return `waiting ${fmtLeft(now - w.from)} before try ${w.nextTry} (backoff)`;
    case 'in-flight':
      return `try ${w.tryNo} in flight`;
    case 'checking':
      return 'answer received, being checked';
  }
}

/** Why the attempt waits, for a tooltip and the line under the chip. */
export function waitWhy(w: LiveWait): string | null {
  switch (w.kind) {
    case 'countdown':
      return w.why === 'rate-limit' ? `try ${w.nextTry} waits: the model is paused after a rate limit (429)` : `try ${w.nextTry} waits the retry-after the server sent`;
    case 'backoff':
      return `try ${w.nextTry} waits a backoff drawn between ${fmtLeft(w.earliest - w.from)} and ${fmtLeft(w.latest - w.from)} (transport.backoff: its base × factor per failure, up to its jitter taken off); the value drawn is not recorded`;
    case 'backoff-unknown':
      return `try ${w.nextTry} waits a backoff; its length is not recorded`;
    default:
      return null;
  }
}
