// Limits probes started from the dashboard (DESIGN: Structural limits, "On the dashboard"): the probe
// of lib/limits runs in this process, under the session's project, database and providers (the
// configured ones, or the simulator under AQVEN_SIMULATE), one at a time per model. Its progress
// lives in memory here, keyed by its id, for GET /api/limits; what it measured is in model_limits
// and its calls in a run of kind `limits`, whichever process reads them.
import 'server-only';
import { randomUUID } from 'node:crypto';
import { latestModelLimits } from '@/db/limits-queries';
import type { Db } from '@/db/types';
import { modelLimitsViews, type LimitsResponse, type LimitWarningView, type ProbeView } from '@/lib/dashboard/limits-view';
import type { Project } from '@/lib/project';
import { readProjectText } from '@/lib/project/read-text';
import { schemaLimitDiagnostics } from '@/lib/project/schema-limits';
import { own } from '@/lib/shared/own';
import { callerLimits } from '@/lib/contracts/caller-limits';
import { StorageError } from '@/db/storage-error';
import { beginLimitsProbe, checkModel, UnknownModelError, type LimitsProgress } from '@/lib/limits/probe';
import { LIMIT_DEFAULTS } from '@/lib/shared/limits-types';
import type { StartLimitsProbe } from '@/lib/contracts/limits-probe';
import type { Caller } from './access';
import { serverSession } from './session';

const g = globalThis as { __aqvenLimitProbes?: Map<string, ProbeView> };
const probes = (g.__aqvenLimitProbes ??= new Map());
/** finished probes are kept this long, so a page that polls sees how they ended */
const KEEP_DONE_MS = 10 * 60_000;

export type StartProbeResult = { ok: true; probeId: string } | { ok: false; code: string; error: string };

function forget(now: number): void {
  for (const [id, p] of probes) if (p.done && now - p.startedAt > KEEP_DONE_MS) probes.delete(id);
}

/** Forgets this process's probes, as a new process knows none (the integration tests' shared process, between files). */
export function forgetProbesForTests(): void {
  probes.clear();
}

/** The probes of `models` this process runs or ran lately, newest first. */
export function probesOf(models: readonly string[]): ProbeView[] {
  forget(Date.now());
  return [...probes.values()].filter((p) => models.includes(p.model)).sort((a, b) => b.startedAt - a.startedAt);
}

/**
 * Starts a probe of `o.model` in the background under the session as it is (its providers: the
 * simulator's under AQVEN_SIMULATE); answers once its run (kind limits) is recorded. Refused when
 * the model is not the project's, is being measured here already, the caller started too many runs,
 * or their daily spend budget is spent (E_BUDGET).
 */
export async function startLimitsProbe(caller: Caller, o: StartLimitsProbe): Promise<StartProbeResult> {
  const s = await serverSession();
  if ([...probes.values()].some((p) => p.model === o.model && !p.done)) return { ok: false, code: 'E_BUSY', error: `${o.model} is being measured already: watch that probe` };
  try {
    checkModel(s.project, o.model);
  } catch (err) {
    if (err instanceof UnknownModelError) return { ok: false, code: 'E_MODEL', error: err.message };
    throw err;
  }
  // a probe is a run (kind limits): it counts against the caller's run starts and their daily spend
  // budget, at the start and before each of its calls (lib/limits/probe.ts)
  const refused = await callerLimits(s.db, caller.author, 'run-start');
  if (refused) return { ok: false, code: refused.code, error: refused.message };
  const view: ProbeView = {
    id: randomUUID(),
    model: o.model,
    dimensions: o.dimensions,
    startedAt: Date.now(),
    startedBy: caller.author,
    runId: null,
    maxCalls: o.maxCalls,
    maxCostUsd: o.maxCostUsd,
    calls: 0,
    costUsd: 0,
    current: null,
    done: false,
    stopped: null,
  };
  const onProgress = (p: LimitsProgress) => {
    view.calls = p.calls;
    view.costUsd = p.costUsd;
    view.current = { dimension: p.dimension, level: p.level, done: p.done, trials: p.trials };
  };
  // one consistent view of the session: a refresh for another request may swap it meanwhile
  const { project, db, providers, env, snapshotId, projectHash, simulated } = s;
  let started;
  try {
    started = await beginLimitsProbe(
      { project, db, providers, env, snapshotId, projectHash, simulated },
      {
        model: o.model,
        dimensions: o.dimensions,
        trials: o.trials,
        threshold: o.threshold,
        maxTokens: o.maxTokens,
        maxCalls: o.maxCalls,
        maxCostUsd: o.maxCostUsd,
        startedBy: caller.author,
        onProgress,
      },
    );
  } catch (err) {
    if (err instanceof StorageError) return { ok: false, code: 'E_STORAGE', error: err.message };
    throw err;
  }
  view.runId = started.runId;
  probes.set(view.id, view);
  void started.done
    .then((report) => {
      view.calls = report.calls;
      view.costUsd = report.costUsd;
      view.stopped = report.stopped?.message ?? null;
    })
    .catch((err: unknown) => {
      view.stopped = `the probe failed: ${err instanceof Error ? err.message : String(err)}`;
    })
    .finally(() => {
      view.done = true;
      view.current = null;
    });
  return { ok: true, probeId: view.id };
}

/** The budgets the start form proposes: the CLI's defaults. */
export function probeDefaults(): { trials: number; maxCalls: number; maxCostUsd: number } {
  return { trials: LIMIT_DEFAULTS.trials, maxCalls: LIMIT_DEFAULTS.maxCalls, maxCostUsd: LIMIT_DEFAULTS.maxCostUsd };
}

/** What the limits panel shows of `models`: their newest measurements and this process's probes of them. */
export async function limitsResponse(db: Db, models: readonly string[]): Promise<LimitsResponse> {
  const unique = [...new Set(models)];
  return { models: modelLimitsViews(unique, await latestModelLimits(db, unique)), probes: probesOf(unique) };
}

/**
 * The W_SCHEMA_LIMIT warnings `aqven check` would give for the nodes `agent` runs: where a node's
 * output schema asks for more than a model of the agent's chain held.
 */
export async function agentLimitWarnings(db: Db, project: Project, agent: string): Promise<LimitWarningView[]> {
  const def = own(project.agents, agent);
  if (!def) return [];
  const limits = await latestModelLimits(db, [def.model, ...def.fallbackModels]);
  const diagnostics = await schemaLimitDiagnostics(project, limits, async (file) => {
    const text = await readProjectText(project.dir, file);
    return typeof text === 'string' ? text : null;
  });
  return diagnostics.flatMap((d) => {
    const flow = Object.values(project.flows).find((f) => f.file === d.file);
    const node = flow && typeof d.path[1] === 'string' ? own(flow.nodes, d.path[1]) : undefined;
    return flow && node && node.agent === agent ? [{ flow: flow.name, node: node.id, file: d.file, line: d.line, col: d.col, message: d.message, hint: d.hint }] : [];
  });
}
