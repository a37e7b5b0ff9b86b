// What a run is started with and what it tells as it goes (DESIGN: flows/NAME.yaml, Storage).
import type { Lease } from '@/db/run-lease';
import type { RunLink, RunOrigin, RunTrace } from '@/db/queries';
import type { Db, RunFacts } from '@/db/types';
import type { RateGate } from '@/lib/engine/rate-gate';
import type { Clock, EngineEvent, NodeResult, ResolvedProvider } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import type { RunRecord } from './run-record';

/** What a run tells as it goes; `at` is the run's clock (ms), as its facts record it. */
export type ProgressEvent =
  | { type: 'run_start'; runId: string; flow: string }
  /** `nodes` start now, at `at` (each node's `startedAt`) */
  | { type: 'turn_start'; turn: number; nodes: string[]; at: number }
  | { type: 'node_skipped'; node: string; reason: string; at: number }
  | { type: 'engine'; node: string; event: EngineEvent }
  /** `at`: the node's `finishedAt` */
  | { type: 'node_end'; node: string; result: NodeResult; at: number }
  | { type: 'run_end'; record: RunRecord }
  /**
   * The run left this process without ending (a worker draining handed it back: DESIGN: Storage,
   * "Hand-back"): no run_end follows here; `record` is the run as this process leaves it (running).
   */
  | { type: 'run_handed_back'; record: RunRecord; reason: string; at: number };

export interface RunFlowOptions {
  project: Project;
  flow: string;
  input: unknown;
  /** overrides project.providers (e.g. routed to the simulator) */
  providers?: Record<string, ResolvedProvider>;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  fetch?: typeof fetch;
  gate?: RateGate;
  /** where to record; null or absent = recording off */
  db?: Db | null;
  runId?: string;
  onProgress?: (e: ProgressEvent) => void;
  /** aborting it interrupts the run: attempts in flight are closed, the run ends `interrupted` */
  signal?: AbortSignal;
  /** the project snapshot the run runs under (PostgreSQL mode), recorded with the run */
  snapshotId?: number | null;
  /** sha256 of the project's files the run runs under (Session.projectHash), recorded with the run */
  projectHash?: string | null;
  /** who starts the run: a user's name, `token:<name>`, `cli:<login>`; recorded with the run */
  startedBy?: string | null;
  /**
   * The caller's span the run continues (DESIGN: Observability, "Traces"): a W3C traceparent, as
   * given to POST /api/runs or stored with the queued run; a malformed one is ignored.
   */
  traceparent?: string | null;
  /**
   * The run's row exists already and this lease on it is committed (a worker claimed the queued
   * run): the run carries on under the lease instead of inserting its row (`runId` names it).
   */
  lease?: Lease;
  /** the run's stored facts to carry on from (a run taken over under `lease`: lib/flow/resume.ts) */
  resume?: ResumeFrom;
  /** a run that is not a plain flow run (recorded with its kind; counted in no statistic): default kind 'flow' */
  runKind?: { kind: 'replay' | 'limits'; replayOf?: string; replayNode?: string };
  /**
   * Runs this one node of the flow and no other (a replay, lib/flow/replay.ts): the outputs of its
   * needs are given, not run; no on_fail route is followed; the run's output is the node's.
   */
  only?: { node: string; outputs: Record<string, unknown> };
}

/**
 * A run taken over after its owner died (DESIGN: Storage, "Leases"): its facts as stored (the
 * attempts the owner cut off already closed), and the node_runs row of each node that has one.
 * Nodes that succeeded, failed or were skipped keep their state; running (or pending) ones restart
 * on their own row, their models' answers so far counted.
 */
export interface ResumeFrom {
  /** with who started the run and under which project, as first recorded: a take-over keeps them */
  facts: RunFacts & Partial<RunOrigin> & Partial<RunLink> & Partial<RunTrace>;
  nodeRunIds: ReadonlyMap<string, string>;
}

/** A run started (its first row committed), as beginRun hands it out. */
export interface StartedRun {
  runId: string;
  /** the rest of the run: its record once it ended — or, handed back, as this process left it (status `running`) */
  done: Promise<RunRecord>;
  /**
   * Stops the run without ending it (a worker draining; DESIGN: Storage, "Leases"): the attempts in
   * flight are closed as interrupted (discarded, their usage kept), no new turn starts, the run and
   * its running nodes stay `running`; once that is committed the lease is released, so another
   * worker takes the run over at once and resumes it. Resolves then (at once if the run had ended).
   */
  handBack(reason: string): Promise<void>;
}
