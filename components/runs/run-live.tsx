'use client';
// What the live run page knows besides the run's own facts: the models' rate-limit pauses (those of
// the page's render, then those the run's events tell of: components/runs/use-runs.ts) and each
// provider's backoff settings, for the wait of an attempt in flight (lib/dashboard/live-wait.ts);
// and a clock that ticks while a countdown shows.
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { isWaiting, liveWait, waitText, waitWhy, type BackoffConfig, type LiveWait, type PauseLite } from '@/lib/dashboard/live-wait';
import type { AttemptFacts } from '@/lib/dashboard/run-view';
import { splitModel } from '@/components/ui/format';

interface RunLive {
  pauses: PauseLite[];
  /** on_rate_limit settings per provider name */
  backoffs: Record<string, BackoffConfig>;
}

const Ctx = createContext<RunLive>({ pauses: [], backoffs: {} });

/** The pauses of the render, each model's replaced by a later one its events told of. */
export function livePauses(rendered: PauseLite[], told: PauseLite[]): PauseLite[] {
  const byModel = new Map(rendered.map((p) => [p.model, p]));
  for (const p of told) if (p.pausedUntil > (byModel.get(p.model)?.pausedUntil ?? 0)) byModel.set(p.model, { model: p.model, pausedUntil: p.pausedUntil });
  return [...byModel.values()];
}

export function RunLiveProvider({ pauses, backoffs, children }: { pauses: PauseLite[]; backoffs: Record<string, BackoffConfig>; children: ReactNode }) {
  return <Ctx.Provider value={{ pauses, backoffs }}>{children}</Ctx.Provider>;
}

/**
 * The current time, re-read every `everyMs` while `active` (a countdown on screen); 0 until the
 * first effect, so the server's render and the browser's first one agree (callers take the max with the poll's time).
 */
export function useTick(active: boolean, everyMs = 100): number {
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [active, everyMs]);
  return now;
}

/** The wait of attempt `a` at `now` (null once it has ended). */
export function useLiveWait(a: AttemptFacts, now: number): LiveWait | null {
  const { pauses, backoffs } = useContext(Ctx);
  return liveWait(a, now, pauses, backoffs[splitModel(a.model).provider] ?? null);
}

/**
 * What an attempt in flight is doing, in words that count down: "next try in 1.4 s", "try 2 in
 * flight". `pollNow` is the time of the last poll; between polls the text ticks on its own.
 */
export function LiveWaitText({ attempt, pollNow, className }: { attempt: AttemptFacts; pollNow: number; className?: string }) {
  const inFlight = attempt.outcome == null && attempt.finishedAt == null;
  const tick = useTick(inFlight);
  const now = Math.max(tick, pollNow);
  const w = useLiveWait(attempt, now);
  if (!w) return null;
  const why = waitWhy(w);
  const waiting = isWaiting(w);
  return (
    <span
      className={`live-wait${waiting ? ' waiting' : ''}${className ? ` ${className}` : ''}`}
      data-testid="live-wait"
      data-kind={w.kind}
      title={why ?? undefined}
      suppressHydrationWarning
    >
      {waitText(w, now)}
    </span>
  );
}
