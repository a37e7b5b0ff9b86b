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
import type { ProgressEvent } from './run-options';

/** A run as its observers first see it. */
export interface ObservedRun {
  runId: string;
  project: string;
  flow: string;
  /** `flow`, `replay` or `limits` */
  kind: string;
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
}

/** One observer's view of one run: told each fact in order; it must not throw (a throw is dropped). */
export interface RunWatch {
  event(e: ProgressEvent): void;
}

export interface RunObserver {
  /** null: this observer has nothing to do for the run */
  watch(run: ObservedRun): RunWatch | null;
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

/** The watches of a run starting now, as one listener; null when nobody watches. */
export function watchRun(run: ObservedRun): ((e: ProgressEvent) => void) | null {
  const watches: RunWatch[] = [];
  for (const o of registry().observers) {
    const w = quietly(() => o.watch(run));
    if (w) watches.push(w);
  }
  if (watches.length === 0) return null;
  return (e) => {
    for (const w of watches) quietly(() => w.event(e));
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
