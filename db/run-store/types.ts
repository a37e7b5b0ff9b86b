// What the run store offers its callers (DESIGN: Storage): the facts of a run as it happens, each
// written behind (within FLUSH_MS) or at a durable point (committed before the promise resolves).
import type { AttemptRecord, ClusterPauses, NodePolicy, PauseOrigin, TryRecord, UsageTotals } from '@/lib/engine/types';
import type { RunKind } from '../queries';
import type { Lease } from '../run-lease';
import type { RunError } from '../types';

/** the kind of a run (db/queries.ts), re-exported for the store's callers */
export type { RunKind };

export interface RunStore {
  /**
   * The run's first write, with its lease (default: this process's, from the wall clock); resolves
   * once committed — a run is never started (no provider called) before it can be recorded. From
   * then on the lease is renewed, and `onLost` hears when the run's facts are refused (its lease
   * was lost: LeaseLostError) or cannot be written (StorageError).
   */
  insertRun(r: {
    id: string;
    project: string;
    flow: string;
    input: unknown;
    startedAt: number;
    lease?: Lease;
    onLost?: (err: Error) => void;
    /** the project snapshot the run runs under (PostgreSQL mode) */
    snapshotId?: number | null;
    /** sha256 of the project's files the run runs under (Session.projectHash) */
    projectHash?: string | null;
    /** who started the run: a user's name, `token:<name>`, `cli:<login>` */
    startedBy?: string | null;
    /** default 'flow'; a replay names the run (replayOf) and the node (replayNode) it re-runs */
    kind?: RunKind;
    replayOf?: string | null;
    replayNode?: string | null;
    /** the trace the run's spans are in (DESIGN: Observability, "Traces"); null: none */
    traceId?: string | null;
    /** the caller's W3C traceparent the run continues (version 00); null: none */
    traceparent?: string | null;
  }): Promise<void>;
  /**
   * A run whose row exists already — a queued run a worker claimed, or a run taken over from a dead
   * worker — carries on with `lease` (already committed by the claim): its facts are fenced by it
   * and the lease renewed from now on, as insertRun's are. `nodeRunIds`: node runs of the run that
   * were written before (a run taken over restarts them), so that their end is fenced too.
   * `traceId`: the trace this process opened for it, written behind (none: the row's is kept).
   */
  adoptRun(r: { id: string; lease: Lease; onLost?: (err: Error) => void; nodeRunIds?: readonly string[]; traceId?: string | null }): void;
  /**
   * Hands a running run back without finishing it (DESIGN: Storage, "Leases"): commits everything
   * queued, then stops renewing its lease and releases it (releaseLease), so another process may
   * take it over at once. Resolves with whether the lease was still ours to release.
   */
  releaseRun(id: string, now: number): Promise<boolean>;
  /** resolves once committed; the run's lease is released */
  finishRun(r: {
    id: string;
    status: 'succeeded' | 'failed' | 'interrupted';
    output: unknown;
    error: RunError | null;
    turns: number;
    usage: UsageTotals;
    finishedAt: number;
  }): Promise<void>;
  setRunTurns(id: string, turns: number): void;
  insertNode(n: {
    id: string;
    runId: string;
    nodeId: string;
    agent: string;
    turn: number;
    /** the node's place in its flow */
    ord: number;
    status: 'running' | 'skipped';
    policy: NodePolicy | null;
    startedAt: number | null;
  }): void;
  /**
   * `runId`: the node's run — its end is fenced by the run's lease even once the store has let the
   * run go (its lease lost, or handed back), so a late end is refused, never written unfenced.
   */
  finishNode(n: {
    id: string;
    runId?: string;
    status: 'succeeded' | 'failed';
    output: unknown;
    error: { code: string; message: string; hint: string } | null;
    usage: UsageTotals;
    finishedAt: number;
  }): void;
  startAttempt(a: { id: string; nodeRunId: string; runId: string; seq: number; model: string; chainIndex: number; answerNo: number; request: unknown; startedAt: number }): void;
  /**
   * Write-ahead (DESIGN: Storage, "Write-ahead"): try `tryNo` of the attempt is about to be sent.
   * Resolves once committed — with the run's queued facts (its run, node and attempt rows, the
   * earlier tries) — and the engine sends nothing before; the starts of every call ready in the
   * same event-loop turn share the commit.
   */
  sendTry(attemptId: string, tryNo: number, at: number): Promise<void>;
  /** the in-flight try's reply named its generation (written behind): a sweep that finds the try cut off can have its usage looked up */
  noteGeneration(attemptId: string, generationId: string): void;
  /** a batch of an attempt's streamed text, already redacted (DESIGN: Streaming): one stream_chunks row */
  appendStreamed(attemptId: string, text: string): void;
  /** a transport re-try mid-stream: the attempt's text starts afresh (the broken try keeps its own) */
  resetStreamed(attemptId: string): void;
  insertTry(attemptId: string, t: TryRecord): void;
  /** `request` is rewritten only when `requestChanged` (a written start row already holds it) */
  finishAttempt(attemptId: string, a: AttemptRecord, requestChanged?: boolean): Promise<void>;
  /**
   * An attempt in flight when its run was stopped (a signal, a lost lease): closed with no outcome,
   * the reason, its streamed text (redacted by the caller) and the usage the provider had reported
   * (`usageUnknown`: it may have billed more); resolves once committed.
   */
  interruptAttempt(
    attemptId: string,
    a: { message: string; streamedText: string | null; usage: UsageTotals; usageUnknown: boolean; finishedAt: number; cutTry?: TryRecord },
  ): Promise<void>;
  /**
   * A later pause wins, and brings its origin (and frees the probe claim of the pause it replaces);
   * an earlier or equal one changes nothing. PostgreSQL: announced (NOTIFY) once committed.
   */
  setPause(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin): void;
  /**
   * SQLite: read from the database; PostgreSQL: the pause as this process knows it — its own at
   * once, other processes' as their notices arrive (db/cluster-gate.ts; a poll every second too)
   */
  getPause(model: string): number | null;
  /** PostgreSQL: re-reads every stored pause now (SQLite reads them on every getPause) */
  refreshPauses(): Promise<void>;
  /** PostgreSQL: the gate's cluster hooks (the probe claimed cluster-wide, waiters woken by notices); absent on SQLite */
  clusterPauses?: ClusterPauses;
  /** commits every queued fact now (and settles the durable facts waiting for it); SQLite commits before it returns */
  flush(): Promise<void>;
}
