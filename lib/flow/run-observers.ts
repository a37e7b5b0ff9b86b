// Who watches runs from outside (DESIGN: Observability): traces, metrics, logs and alerts subscribe
// here once per process, and every run — whatever door started it (the CLI, the API, a form, a
// worker) — tells them its facts as they happen, through the one FlowRun that runs it. Observers are
// told, never awaited: a slow or failing observer never holds up a call or a write.
//
// The list lives on globalThis, not in this module: under `aqven serve` the dashboard's server code is
// Next.js's bundle of lib/, a second copy of this module in the same process, and a run started from
// a form must reach the observers the command registered.
import type { Db } from '@/db/types';
import type { Project } from '@/lib/project';
import type { TraceParent } from '@/lib/contracts/traceparent';
import type { ProgressEvent } from './run-options';

/** A run as its observers first see it. */
export interface ObservedRun {
  runId: string;
  project: string;
  flow: string;
  /** `flow`, `replay` or `limits` */
  kind: string;
  /** each node of the flow's agent, by node id */
  agents: Readonly<Record<string, string>>;
  /** who started it (a user's name, `token:<name>`, `cli:<login>`), as recorded */
  startedBy: string | null;
  /** ms */
  startedAt: number;
  /** carried on from its stored facts after its owner stopped (a take-over) */
  resumed: boolean;
  /**
   * where its facts are committed (null: recording off). By `run_end` the run's end and its nodes'
   * are committed, so an observer may read them (failure groups, for alerts) — never write the run.
   */
  db: Db | null;
  /** the project as loaded for this run: aqven.yaml's settings (alerts) as the run saw them */
  config: Project;
  /** the caller's span the run continues (a W3C traceparent it was started or queued with); null: none */
  parent: TraceParent | null;
  /**
   * The run's trace (`runs.trace_id`): the one a tracer (`opensTraces`) opened for it, else its
   * parent's; null when neither — no tracer runs in this process and nobody passed a traceparent.
   */
  traceId: string | null;
}

/** One observer's view of one run: told each fact in order; it must not throw (a throw is dropped). */
export interface RunWatch {
  event(e: ProgressEvent): void;
  /** a tracer's: the trace it opened for the run (null: the run is not sampled), told to every other observer */
  traceId?: string | null;
}

export interface RunObserver {
  /** null: this observer has nothing to do for the run */
  watch(run: ObservedRun): RunWatch | null;
  /** it opens a trace per run (lib/observe's tracer): it watches first, so the others know the trace id */
  opensTraces?: boolean;
}

const KEY = Symbol.for('aqven.run-observers');
type Registry = { observers: Set<RunObserver> };

function registry(): Registry {
  const g = globalThis as { [KEY]?: Registry };
  return (g[KEY] ??= { observers: new Set() });
}

/** Adds an observer of every run this process starts from now on; returns its removal. */
export function addRunObserver(observer: RunObserver): () => void {
  const { observers } = registry();
  observers.add(observer);
  return () => observers.delete(observer);
}

/** A run starting now as its observers hear it: one listener (null when nobody watches) and its trace id. */
export interface WatchedRun {
  listener: ((e: ProgressEvent) => void) | null;
  traceId: string | null;
}

/** The watches of a run starting now: a tracer's first, then the rest, told the trace it opened. */
export function watchRun(run: Omit<ObservedRun, 'traceId'>): WatchedRun {
  const observers = [...registry().observers];
  const watches: RunWatch[] = [];
  let traceId = run.parent?.traceId ?? null;
  for (const o of observers.filter((x) => x.opensTraces)) {
    const w = quietly(() => o.watch({ ...run, traceId }));
    if (!w) continue;
    watches.push(w);
    if (w.traceId) traceId = w.traceId;
  }
  for (const o of observers.filter((x) => !x.opensTraces)) {
    const w = quietly(() => o.watch({ ...run, traceId }));
    if (w) watches.push(w);
  }
  if (watches.length === 0) return { listener: null, traceId };
  return {
    listener: (e) => {
      for (const w of watches) quietly(() => w.event(e));
    },
    traceId,
  };
}

/** An observer's mistake is its own: the run goes on as if nobody watched. */
function quietly<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}
