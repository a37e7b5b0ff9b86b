// What the run page shows besides the run's stored facts (DESIGN: The dashboard, "The live run
// page", "The flow graph"): the run's flow as the project has it now (its nodes, needs and on_fail
// routes), each provider's backoff settings and the models' pauses, for the waits of attempts in flight;
// the link of the run's trace (AQVEN_TRACE_URL).
import 'server-only';
import { activePauses } from '@/db/pause-queries';
import type { RunKind, RunTrace } from '@/db/queries';
import type { RunFacts } from '@/db/types';
import { flowShape, type FlowShape } from '@/lib/dashboard/flow-graph';
import type { BackoffConfig, PauseLite } from '@/lib/dashboard/live-wait';
import { traceLink, TRACE_URL_ENV, type TraceLink } from '@/lib/dashboard/trace-link';
import { TRANSPORT_BACKOFF_DEFAULT } from '@/lib/engine/backoff';
import type { Session } from '@/lib/flow/session';
import { own } from '@/lib/shared/own';
import { errorPageCodes } from './docs';

export interface RunPageExtras {
  flow: FlowShape | null;
  flowNote: string | null;
  backoffs: Record<string, BackoffConfig>;
  pauses: PauseLite[];
  /** the run's trace in the team's trace UI (AQVEN_TRACE_URL), or why the setting gives none */
  trace: TraceLink;
  /** the codes docs/errors.md explains: a failed run's or node's hint links to its section */
  errorCodes: string[];
}

export async function runPageExtras(
  session: Session,
  run: RunFacts & { projectHash?: string | null; kind?: RunKind } & Partial<RunTrace>,
  now = Date.now(),
): Promise<RunPageExtras> {
  // a replay or a limits run ran some nodes only: the flow's others were never meant to run (no graph, none pending)
  const def = run.kind === undefined || run.kind === 'flow' ? own(session.project.flows, run.flow) : undefined;
  // the run ran under other files (an edit, a newer snapshot): the graph is the flow as it is now
  const changed = run.projectHash != null && run.projectHash !== session.projectHash;
  const backoffs: Record<string, BackoffConfig> = {};
  for (const [name, p] of Object.entries(session.providers)) backoffs[name] = p.transport.backoff ?? TRANSPORT_BACKOFF_DEFAULT;
  const live = run.status === 'queued' || run.status === 'running';
  return {
    flow: def ? flowShape(def) : null,
    flowNote: def && changed ? 'as the project has it now: the run started under an earlier version of the files' : null,
    backoffs,
    pauses: live ? (await activePauses(session.db, now)).map((p) => ({ model: p.model, pausedUntil: p.pausedUntil })) : [],
    trace: traceLink(run.traceId, process.env[TRACE_URL_ENV]),
    errorCodes: errorPageCodes(),
  };
}
