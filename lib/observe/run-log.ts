// The run lines of the structured logs (DESIGN: Observability, "Logs"): a run observer
// (lib/flow/run-observers.ts) that says, for every run of the process, when it started and how it
// ended, each attempt that did not end ok, each rate-limit pause and each node that failed. Every
// line of a run carries its run id and trace id; a node's lines its node, an attempt's its model.
// Failure text goes through the logger's `safe` (redacted, cut); our own words (a pause's reason,
// codes, model names) are written as they are.
import type { AttemptRecord, EngineEvent, NodeResult } from '@/lib/engine/types';
import { fmtDuration } from '@/lib/engine/duration-text';
import type { ObservedRun, RunObserver, RunWatch } from '@/lib/flow/run-observers';
import type { RunRecord } from '@/lib/flow/run-record';
import { fmtCost } from '@/lib/shared/cost-text';
import type { Logger, ProcessLogger } from './logger';

const notOk = (a: AttemptRecord) => a.outcome !== 'ok' || a.cause !== null;

const attemptsOf = (r: RunRecord) => r.nodes.reduce((n, x) => n + x.attempts.length, 0);

/** An attempt that did not end ok: what it was, and what the policy did about it. */
function attemptLine(log: Logger, safe: ProcessLogger['safe'], node: string, a: AttemptRecord): void {
  const cause = a.cause && a.cause !== a.outcome ? ` (${a.cause})` : '';
  log.info(
    {
      node,
      model: a.model,
      seq: a.seq,
      answerNo: a.answerNo,
      chainIndex: a.chainIndex,
      outcome: a.outcome,
      cause: a.cause,
      action: a.action,
      finishReason: a.finishReason,
      errorKind: a.error?.kind ?? null,
      error: a.error ? safe(a.error.message) : null,
      tries: a.tries.length,
      latencyMs: a.finishedAt - a.startedAt,
      usage: a.usage,
    },
    `${node}: ${a.model} answer ${a.answerNo} ${a.outcome}${cause}, action ${a.action}`,
  );
}

function engineLine(log: Logger, safe: ProcessLogger['safe'], node: string, e: EngineEvent): void {
  switch (e.type) {
    case 'attempt_end':
      if (notOk(e.attempt)) attemptLine(log, safe, node, e.attempt);
      return;
    case 'rate_limit_pause': {
      const until = new Date(e.pausedUntil).toISOString();
      log.warn(
        {
          node,
          model: e.model,
          pausedUntil: until,
          pauseMs: e.pausedUntil - e.origin.setAt,
          reason: e.reason,
          serverWait: e.origin.serverWait,
          askedMs: e.origin.askedMs,
          maxWaitMs: e.origin.maxWaitMs,
        },
        `${e.model} paused for ${fmtDuration(Math.max(0, e.pausedUntil - e.origin.setAt))}, until ${until}: ${e.reason}`,
      );
      return;
    }
    case 'try_end':
      if (e.try.error && log.isLevelEnabled('debug')) {
        const t = e.try;
        log.debug(
          { node, seq: e.seq, tryNo: t.tryNo, status: t.status, tryError: t.error, retryAfterMs: t.retryAfterMs, waitedMs: t.waitedMs },
          `${node}: attempt ${e.seq} try ${t.tryNo} ${t.error}${t.status ? ` (HTTP ${t.status})` : ''}`,
        );
      }
      return;
    case 'attempt_interrupted':
      log.debug({ node, seq: e.seq, usage: e.usage, usageUnknown: e.usageUnknown }, `${node}: attempt ${e.seq} interrupted`);
      return;
    default:
      // deltas, try starts, generations: the hot path says nothing
      return;
  }
}

function nodeLine(log: Logger, safe: ProcessLogger['safe'], node: string, r: NodeResult): void {
  const model = r.attempts.at(-1)?.model ?? null;
  if (r.status === 'failed' && r.error) {
    log.warn(
      { node, model, code: r.error.code, error: safe(r.error.message), attempts: r.attempts.length, usage: r.usage },
      `${node} failed: ${r.error.code}${model ? ` (last model ${model})` : ''}`,
    );
  } else {
    log.debug({ node, model, attempts: r.attempts.length, usage: r.usage }, `${node} ${r.status}`);
  }
}

function endLine(log: Logger, safe: ProcessLogger['safe'], run: ObservedRun, r: RunRecord): void {
  const durationMs = r.finishedAt ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : null;
  const attempts = attemptsOf(r);
  const fields = {
    flow: r.flow,
    status: r.status,
    durationMs,
    attempts,
    usage: r.usage,
    usageUnknown: r.usageUnknown,
    resumed: run.resumed,
    error: r.error ? { code: r.error.code, node: r.error.node, message: safe(r.error.message) } : null,
  };
  const why = r.error ? ` (${r.error.code}${r.error.node ? ` at ${r.error.node}` : ''})` : '';
  const took = durationMs === null ? '' : `, ${fmtDuration(durationMs)}${run.resumed ? ' since it started (taken over)' : ''}`;
  const cost = `, ${fmtCost(r.usage.costUsd)}${r.usageUnknown ? ' or more' : ''}`;
  const msg = `run ${r.id} ${r.flow} ${r.status}${why}: ${attempts} attempt${attempts === 1 ? '' : 's'}${took}${cost}`;
  if (r.status === 'succeeded') log.info(fields, msg);
  else log.warn(fields, msg);
}

/** The observer that writes every run's lines to `p` (registered once per process by serve and worker). */
export function runLogObserver(p: ProcessLogger): RunObserver {
  return {
    watch(run: ObservedRun): RunWatch | null {
      // nothing of a run is said below warn, and only its failures there: silent or error, no watch at all
      if (!p.log.isLevelEnabled('warn')) return null;
      const log = p.log.child({ runId: run.runId, traceId: run.traceId });
      return {
        event(e) {
          switch (e.type) {
            case 'run_start':
              log.info(
                { flow: run.flow, kind: run.kind, project: run.project, startedBy: run.startedBy, resumed: run.resumed },
                `run ${run.runId} ${run.flow} ${run.resumed ? 'resumed (taken over)' : 'started'}`,
              );
              return;
            case 'engine':
              engineLine(log, p.safe, e.node, e.event);
              return;
            case 'node_end':
              nodeLine(log, p.safe, e.node, e.result);
              return;
            case 'node_skipped':
              log.debug({ node: e.node, reason: e.reason }, `${e.node} skipped`);
              return;
            case 'run_end':
              endLine(log, p.safe, run, e.record);
              return;
            default:
              return;
          }
        },
      };
    },
  };
}
