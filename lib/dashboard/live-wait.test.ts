import { describe, expect, it } from 'vitest';
import { liveWait, waitText } from './live-wait';
import type { AttemptFacts, TryFacts } from './run-view';

function inFlight(tries: TryFacts[], over: Partial<AttemptFacts> = {}): AttemptFacts {
  return {
    seq: 1,
    model: 'sim:a',
    chainIndex: 0,
    answerNo: 1,
    outcome: null,
    finishReason: null,
    cause: null,
    action: 'none',
    request: [],
    responseText: null,
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    startedAt: 0,
    finishedAt: null,
    tries,
    ...over,
  };
}

const tryRow = (tryNo: number, over: Partial<TryFacts>): TryFacts => ({ tryNo, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 0, finishedAt: 100, ...over });
const backoff = { baseMs: 1000, factor: 2, capMs: 60_000, jitter: 0.2 };

describe('liveWait: what an attempt in flight is doing', () => {
  it('counts down to the end of the model’s pause after a 429', () => {
    const a = inFlight([tryRow(1, { status: 429, error: 'rate_limited', retryAfterMs: 3000, finishedAt: 100 })]);
    const w = liveWait(a, 1700, [{ model: 'sim:a', pausedUntil: 3100 }], backoff)!;
    expect(w).toMatchObject({ kind: 'countdown', why: 'rate-limit', nextTry: 2, until: 3100 });
    expect(waitText(w, 1700)).toBe('next try in 1.4 s');
    // the pause is over: the next try is out
    expect(liveWait(a, 3200, [{ model: 'sim:a', pausedUntil: 3100 }], backoff)).toEqual({ kind: 'in-flight', tryNo: 2 });
  });

  it('counts down the retry-after of a server error (no pause involved)', () => {
    const a = inFlight([tryRow(1, { status: 503, error: 'server_error', retryAfterMs: 2000, finishedAt: 500 })]);
    const w = liveWait(a, 1000, [], backoff)!;
    expect(w).toMatchObject({ kind: 'countdown', why: 'retry-after', until: 2500 });
    expect(waitText(w, 1000)).toBe('next try in 1.5 s');
  });

  it('gives a backoff without a server wait as the range it was drawn from, never a made-up countdown', () => {
    // second transient failure: transport.backoff base × 2 = 2 s, up to 20% off
    const a = inFlight([tryRow(1, { status: 503, error: 'server_error', finishedAt: 100 }), tryRow(2, { status: 500, error: 'server_error', startedAt: 1200, finishedAt: 1300 })]);
    const w = liveWait(a, 1300, [], backoff)!;
    expect(w).toMatchObject({ kind: 'backoff', nextTry: 3, earliest: 1300 + 1600, latest: 1300 + 2000 });
    expect(waitText(w, 1300)).toBe('next try in 1.6 s–2.0 s');
    expect(waitText(w, 3000)).toBe('next try any moment (within 0.3 s)');
    expect(liveWait(a, 3400, [], backoff)).toEqual({ kind: 'in-flight', tryNo: 3 });
    // without the provider's settings the page says a backoff is running, with no length
    expect(liveWait(a, 1500, [], null)).toMatchObject({ kind: 'backoff-unknown', nextTry: 3 });
  });

  it('says a try is in flight when no try has ended yet, unless the model is paused at the gate', () => {
    expect(liveWait(inFlight([]), 50, [], backoff)).toEqual({ kind: 'in-flight', tryNo: 1 });
    expect(liveWait(inFlight([]), 50, [{ model: 'sim:a', pausedUntil: 900 }], backoff)).toMatchObject({ kind: 'countdown', why: 'rate-limit', nextTry: 1, until: 900 });
    // another model's pause does not hold this one
    expect(liveWait(inFlight([]), 50, [{ model: 'sim:b', pausedUntil: 900 }], backoff)).toEqual({ kind: 'in-flight', tryNo: 1 });
  });

  it('has nothing to say about an attempt that ended', () => {
    expect(liveWait(inFlight([], { outcome: 'ok', finishedAt: 10 }), 50, [], backoff)).toBeNull();
  });
});
