// The dashboard server's one session over its project (cached across requests and hot reloads),
// and the runs it starts in the background.
import 'server-only';
import { runFlow, RunInputError, UnknownFlowError, validateRunInput } from '@/lib/flow/run-flow';
import { flushRunStore } from '@/db/run-store';
import { openSession, type Session } from '@/lib/flow/session';
import { randomUUID } from 'node:crypto';
import { dashboardContext } from './context';

const g = globalThis as { __aqvenSession?: Promise<Session> };

export function serverSession(): Promise<Session> {
  if (!g.__aqvenSession) {
    const ctx = dashboardContext();
    g.__aqvenSession = openSession(ctx.projectDir, { simulate: ctx.simulate });
    g.__aqvenSession.catch(() => {
      g.__aqvenSession = undefined; // a broken project can be fixed without a restart
    });
  }
  return g.__aqvenSession;
}

export type StartRunResult = { ok: true; id: string } | { ok: false; status: 400 | 404; error: string; field?: string };

/** Validates and starts a run; it continues in this process after the response is sent. */
export async function startRun(flowName: string, input: unknown): Promise<StartRunResult> {
  const s = await serverSession();
  const flow = s.project.flows[flowName];
  if (!flow) return { ok: false, status: 404, error: new UnknownFlowError(flowName, Object.keys(s.project.flows)).message };
  try {
    validateRunInput(flow, input);
  } catch (err) {
    if (err instanceof RunInputError) return { ok: false, status: 400, error: err.message, field: err.field };
    throw err;
  }
  const id = randomUUID();
  void runFlow({ project: s.project, flow: flowName, input, providers: s.providers, env: s.env, db: s.db, runId: id }).catch((err) =>
    console.error(`run ${id} stopped:`, err),
  );
  // runFlow queues the run's row before its first await: write it now, so the id handed out
  // answers at once (GET /api/runs/:id, the run page)
  flushRunStore(s.db);
  return { ok: true, id };
}
