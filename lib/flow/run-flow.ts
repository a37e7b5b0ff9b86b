// The run loop (DESIGN: flows/NAME.yaml, Storage): validate the input, then proceed in turns —
// every node whose `needs` are settled runs concurrently in the same turn — routing around failed
// nodes through `on_fail`, and recording every fact as it happens when a database is given.
// A run is recorded or not run: its first row is committed before any provider is called, and a
// run whose facts can no longer be written (StorageError) or are refused (its lease was lost) is
// stopped at once. A stop from outside (a signal: `signal`, or interruptAll) ends it `interrupted`;
// a hand-back (a worker draining) stops it without ending it, for another worker to resume
// (DESIGN: Storage, "Leases"), and a run taken over from a dead worker carries on from its facts
// (`resume`, lib/flow/resume.ts). Where each part lives: the schedule (schedule.ts, pure), the run
// in progress and its writes (flow-run.ts), its phases (run-phase.ts), the input check (run-input.ts).
import { own } from '@/lib/shared/own';
import { trackRun } from './active-runs';
import { FlowRun } from './flow-run';
import { RunInterruptedError, UnknownFlowError } from './run-errors';
import { validateRunInput } from './run-input';
import type { RunFlowOptions, StartedRun } from './run-options';
import type { RunRecord } from './run-record';

export { RunInputError, RunInterruptedError, RunNotRecordedError, UnknownFlowError } from './run-errors';
export { validateRunInput, type InputCheckOptions } from './run-input';
export type { ProgressEvent, ResumeFrom, RunFlowOptions, StartedRun } from './run-options';

/**
 * The run loop (DESIGN: flows/NAME.yaml): start the run, then turn after turn run every node whose
 * `needs` succeeded, until no node is ready; then settle the run. Throws a StorageError, before any
 * provider is called, when the run cannot be recorded; a RunNotRecordedError when it stopped being
 * recordable mid-way.
 */
export async function runFlow(opts: RunFlowOptions): Promise<RunRecord> {
  return (await beginRun(opts)).done;
}

/**
 * Starts a run and returns once its first row is committed (a StorageError when it cannot be: no
 * provider is called); `done` is the rest of the run, as runFlow's result.
 */
export async function beginRun(opts: RunFlowOptions): Promise<StartedRun> {
  const run = startRun(opts);
  await run.started;
  const done = run.loop();
  trackRun({ runId: run.runId, interrupt: (why) => run.stop(new RunInterruptedError(why)), interruptNow: (why) => run.interruptNow(why), done });
  return { runId: run.runId, done, handBack: (why) => run.handBack(why, done) };
}

/** Checks the flow and its input, then records the run's start (queued before the first await). */
function startRun(opts: RunFlowOptions): FlowRun {
  // own entries only: a flow named "constructor" or "__proto__" is not Object.prototype's
  const flow = own(opts.project.flows, opts.flow);
  if (!flow) throw new UnknownFlowError(opts.flow, Object.keys(opts.project.flows));
  if (opts.only && !own(flow.nodes, opts.only.node)) throw new Error(`flow ${flow.name} has no node "${opts.only.node}"`);
  // a run under a lease was stored (queued, or taken over) already, a replay's input too: its input is not bounded again
  validateRunInput(flow, opts.input, opts.lease || opts.only ? { maxBytes: Infinity } : {});
  const run = new FlowRun(opts, flow);
  run.start();
  return run;
}
