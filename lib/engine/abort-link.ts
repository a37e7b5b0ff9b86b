// The one hand-written abort link of the code base. Everywhere else a signal made of others is
// `AbortSignal.any([...])`; here it is not, because the parent is long-lived and the link is made
// again and again under it: a run's signal is linked once per try (one-try.ts) and once per wait at
// the rate gate. On Node 20 every AbortSignal.any call leaves an entry in the parent's set of
// dependants until the parent itself is collected (nodejs/node#55351), and a combined signal that
// still has listeners is kept whole while its sources live; a link that takes its listener off
// leaves nothing behind.

/** The reason a signal aborted with (a signal aborted without one carries an AbortError). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

export interface AbortLink {
  /** aborts with `outer`'s reason when `outer` aborts; the owner may abort it with a reason of its own */
  ac: AbortController;
  /** takes the listener off `outer`: call it when the work under the link is over */
  unlink(): void;
}

/** A controller of one piece of work that aborts too when `outer` does. */
export function linkAbort(outer: AbortSignal | undefined): AbortLink {
  const ac = new AbortController();
  if (!outer) return { ac, unlink: () => {} };
  const onOuter = () => ac.abort(abortReason(outer));
  if (outer.aborted) onOuter();
  else outer.addEventListener('abort', onOuter, { once: true });
  return { ac, unlink: () => outer.removeEventListener('abort', onOuter) };
}
