// The runs this process is running, so that a stop signal reaches every one of them (DESIGN: CLI,
// "Signals"; The dashboard): interruptAll() aborts their attempts in flight and waits — bounded —
// until each has recorded itself as interrupted; interruptAllNow() records the stragglers
// synchronously (better-sqlite3 is synchronous), for the last moment of a process: its 'exit' event.

export interface ActiveRun {
  readonly runId: string;
  /** aborts the run's attempts; the run records itself interrupted and `done` settles */
  interrupt(why: string): void;
  /** records the run interrupted now, synchronously, with what is known (a process about to exit) */
  interruptNow(why: string): void;
  readonly done: Promise<unknown>;
}

const g = globalThis as { __aqvenActiveRuns?: Set<ActiveRun> };
const active: Set<ActiveRun> = (g.__aqvenActiveRuns ??= new Set());

/** Registers a run until its `done` settles. */
export function trackRun(run: ActiveRun): void {
  active.add(run);
  const forget = () => active.delete(run);
  run.done.then(forget, forget);
}

export function activeRuns(): ActiveRun[] {
  return [...active];
}

/** How long interruptAll waits for the runs to record themselves, by default. */
export const INTERRUPT_GRACE_MS = 3_000;

/**
 * Interrupts every run of this process (`why`, e.g. "stopped by SIGTERM") and waits until each
 * has recorded itself, at most `graceMs`; whatever is still running then is recorded synchronously.
 */
export async function interruptAll(why: string, graceMs = INTERRUPT_GRACE_MS): Promise<void> {
  const runs = activeRuns();
  if (runs.length === 0) return;
  for (const r of runs) r.interrupt(why);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(runs.map((r) => r.done)), late]);
  clearTimeout(timer);
  interruptAllNow(why);
}

/** Records every run still running as interrupted, synchronously. */
export function interruptAllNow(why: string): void {
  for (const r of activeRuns()) {
    try {
      r.interruptNow(why);
    } catch (err) {
      console.error(`aqven: run ${r.runId} could not be recorded as interrupted: ${err instanceof Error ? err.message : String(err)}`);
    }
    active.delete(r);
  }
}
