// AQVEN's Prometheus metrics (DESIGN: Observability, "Metrics"; docs/monitoring.md lists each
// metric, its labels and their bounds). Two sources: a RunObserver (lib/flow/run-observers.ts) counts
// what this process's runs do as they do it — attempts, latencies, tokens, cost, tries, pauses set,
// runs ended — and a scrape reads what the database knows across processes — the pauses in force,
// the queue and the live workers (PostgreSQL). Redactions are the redactor's own tally
// (lib/redact/tally.ts). Labels are bounded (metric-labels.ts): no run id, no input, no failure text.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { activePauses } from '@/db/pause-queries';
import { queueGauges } from '@/db/status-queries';
import type { Db } from '@/db/types';
import type { AttemptRecord, EngineEvent, TryRecord } from '@/lib/engine/types';
import type { ObservedRun, RunObserver, RunWatch } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import { redactionCounts, type PiiKind } from '@/lib/redact';
import { MetricLabels } from './metric-labels';

/** seconds: an LLM answer takes from a tenth of a second to minutes */
export const ATTEMPT_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
/** seconds: a node is one or more attempts, waits included */
export const NODE_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
const PII_KINDS: readonly PiiKind[] = ['email', 'iban', 'card', 'phone', 'ip'];
/** an attempt ended without an outcome (stopped, handed back): its `outcome` label */
export const INTERRUPTED = 'interrupted';

export interface MetricsOptions {
  /** ms, for node durations (wall time from the node's turn to its end) and the database gauges; Date.now by default */
  now?: () => number;
  /** prom-client's process_* and nodejs_* metrics (CPU, memory, event loop): on for a process's own registry */
  processMetrics?: boolean;
  /** distinct values per project-named label (metric-labels.ts) */
  labelValuesMax?: number;
  env?: Record<string, string | undefined>;
}

/** One process's metrics: the registry, the observer that feeds it, and the scrape. */
export interface AqvenMetrics {
  registry: Registry;
  observer: RunObserver;
  /** The text exposition; the database's gauges read from `db` first (null: none are reported). */
  expose(db: Db | null): Promise<{ contentType: string; body: string }>;
}

const ms = (n: number) => Math.max(0, n) / 1000;

export function createMetrics(o: MetricsOptions = {}): AqvenMetrics {
  const now = o.now ?? Date.now;
  const registry = new Registry();
  const registers = [registry];
  const labels = new MetricLabels(o.labelValuesMax);
  const MODEL = ['provider', 'model'] as const;

  const attempts = new Counter({
    name: 'aqven_attempts_total',
    help: 'Attempts ended in this process (one answer of one model for a node), by outcome (ok, error, refusal, truncated; interrupted: none), cause and the action that followed',
    labelNames: [...MODEL, 'outcome', 'cause', 'action'],
    registers,
  });
  const attemptSeconds = new Histogram({
    name: 'aqven_attempt_duration_seconds',
    help: "An attempt's duration from its start to its end, its transport tries and waits included",
    labelNames: [...MODEL, 'outcome'],
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: 'aqven_tokens_total',
    help: "Tokens the provider reported for this process's attempts, by type (input, output; reasoning tokens are part of output)",
    labelNames: [...MODEL, 'type'],
    registers,
  });
  const cost = new Counter({
    name: 'aqven_cost_usd_total',
    help: "Cost in USD of this process's attempts, as recorded (the provider's stated charge, else the catalogue's price)",
    labelNames: MODEL,
    registers,
  });
  const usageUnknown = new Counter({
    name: 'aqven_attempts_usage_unknown_total',
    help: 'Attempts whose reply was not read to its end: the provider may have billed tokens that aqven_tokens_total and aqven_cost_usd_total lack',
    labelNames: MODEL,
    registers,
  });
  const tries = new Counter({
    name: 'aqven_transport_tries_total',
    help: 'HTTP exchanges (transport tries) of attempts, by result: ok, or the try error (rate_limited, server_error, timeout, connection, client_error)',
    labelNames: [...MODEL, 'result'],
    registers,
  });
  const retries = new Counter({
    name: 'aqven_transport_retries_total',
    help: 'Transport tries after the first of their attempt, by the error of the try before (why it was retried)',
    labelNames: [...MODEL, 'reason'],
    registers,
  });
  const pausesSet = new Counter({
    name: 'aqven_rate_limit_pauses_total',
    help: "Rate-limit pauses this process's 429s set or lengthened (every call of the model waits)",
    labelNames: MODEL,
    registers,
  });
  const nodeSeconds = new Histogram({
    name: 'aqven_node_duration_seconds',
    help: "A node's duration from its turn's start to its end (wall time), by status (succeeded, failed)",
    labelNames: ['flow', 'node', 'status'],
    buckets: NODE_BUCKETS,
    registers,
  });
  const runs = new Counter({
    name: 'aqven_runs_total',
    help: 'Runs ended in this process, by flow, kind (flow, replay) and status (succeeded, failed, interrupted)',
    labelNames: ['flow', 'kind', 'status'],
    registers,
  });
  new Counter({
    name: 'aqven_redactions_total',
    help: 'Finds of the five detectors replaced by their placeholder in this process, by kind (email, iban, card, phone, ip)',
    labelNames: ['kind'],
    registers,
    collect() {
      const counts = redactionCounts();
      this.reset();
      for (const kind of PII_KINDS) this.inc({ kind }, counts[kind]);
    },
  });
  const db = dbGauges();
  if (o.processMetrics) collectDefaultMetrics({ register: registry });

  /** what the observer counts for one attempt's end */
  const attemptEnded = (model: { provider: string; model: string }, a: AttemptRecord) => {
    attempts.inc({ ...model, outcome: a.outcome, cause: a.cause ?? 'none', action: a.action });
    attemptSeconds.observe({ ...model, outcome: a.outcome }, ms(a.finishedAt - a.startedAt));
    usage(model, a.usage, a.usageUnknown === true);
  };
  const usage = (model: { provider: string; model: string }, u: { inputTokens: number; outputTokens: number; costUsd: number }, unknown: boolean) => {
    tokens.inc({ ...model, type: 'input' }, u.inputTokens);
    tokens.inc({ ...model, type: 'output' }, u.outputTokens);
    cost.inc(model, u.costUsd);
    if (unknown) usageUnknown.inc(model);
  };

  const observer: RunObserver = {
    watch(run: ObservedRun): RunWatch {
      const flow = labels.flow(run.flow);
      /** the model of each attempt in flight, by node and seq (a try's and an interruption's event name only those) */
      const inFlight = new Map<string, { model: { provider: string; model: string }; lastError: TryRecord['error'] }>();
      const nodeStarts = new Map<string, number>();
      const key = (node: string, seq: number) => `${node}\u0000${seq}`;
      const engine = (node: string, e: EngineEvent) => {
        if (e.type === 'attempt_start') inFlight.set(key(node, e.seq), { model: labels.model(e.model), lastError: null });
        else if (e.type === 'try_end') {
          const a = inFlight.get(key(node, e.seq));
          if (!a) return;
          tries.inc({ ...a.model, result: e.try.error ?? 'ok' });
          if (e.try.tryNo > 1) retries.inc({ ...a.model, reason: a.lastError ?? 'none' });
          a.lastError = e.try.error;
        } else if (e.type === 'attempt_end') {
          inFlight.delete(key(node, e.attempt.seq));
          attemptEnded(labels.model(e.attempt.model), e.attempt);
        } else if (e.type === 'attempt_interrupted') {
          const a = inFlight.get(key(node, e.seq));
          inFlight.delete(key(node, e.seq));
          if (!a) return;
          attempts.inc({ ...a.model, outcome: INTERRUPTED, cause: 'none', action: 'none' });
          usage(a.model, e.usage, e.usageUnknown);
        } else if (e.type === 'rate_limit_pause') pausesSet.inc(labels.model(e.model));
      };
      return {
        event(e: ProgressEvent) {
          if (e.type === 'engine') engine(e.node, e.event);
          else if (e.type === 'turn_start') for (const n of e.nodes) nodeStarts.set(n, now());
          else if (e.type === 'node_end') {
            const start = nodeStarts.get(e.node);
            nodeStarts.delete(e.node);
            if (start !== undefined) nodeSeconds.observe({ flow, node: labels.node(e.node), status: e.result.status }, ms(now() - start));
          } else if (e.type === 'run_end') runs.inc({ flow, kind: run.kind, status: e.record.status });
        },
      };
    },
  };

  return {
    registry,
    observer,
    async expose(source) {
      const parts = [await registry.metrics()];
      if (source) parts.push(...(await db.read(source, now(), labels, o.env ?? process.env)));
      return { contentType: registry.contentType, body: parts.join('\n') };
    },
  };
}

/**
 * The gauges a scrape reads from the database: what every process on it sees alike. Values are read
 * first, then set together, so one scrape never shows half of one read and half of another. They
 * live in registries of their own, exposed only when they apply: none without a database, the
 * queue's only in PostgreSQL mode, and only aqven_database_up when the read failed.
 */
function dbGauges() {
  const health = new Registry();
  const up = new Gauge({
    name: 'aqven_database_up',
    help: "1 when this scrape read the database's gauges (pauses, queue, workers); 0 when the read failed (they are absent)",
    registers: [health],
  });
  const stored = new Registry();
  const paused = new Gauge({
    name: 'aqven_rate_limit_paused',
    help: 'Models paused after a 429 right now, as the database holds the pause (every process sees it): 1 while paused, absent otherwise',
    labelNames: ['provider', 'model'],
    registers: [stored],
  });
  const pauseLeft = new Gauge({
    name: 'aqven_rate_limit_pause_remaining_seconds',
    help: "Seconds until a paused model's pause ends",
    labelNames: ['provider', 'model'],
    registers: [stored],
  });
  const queued = new Registry();
  const queueJobs = new Gauge({
    name: 'aqven_queue_jobs',
    help: "PostgreSQL mode: queued runs' jobs by state (waiting, running, left: locked by a worker that stopped, failed: out of attempts)",
    labelNames: ['state'],
    registers: [queued],
  });
  const oldest = new Gauge({
    name: 'aqven_queue_oldest_queued_age_seconds',
    help: 'PostgreSQL mode: how long the longest-waiting queued run has waited (0 when none waits)',
    registers: [queued],
  });
  const workers = new Gauge({
    name: 'aqven_workers_live',
    help: 'PostgreSQL mode: workers not stopped whose heartbeat is less than a minute old',
    registers: [queued],
  });
  return {
    /** Reads the database and answers the expositions that apply. */
    async read(db: Db, now: number, labels: MetricLabels, env: Record<string, string | undefined>): Promise<string[]> {
      let pauses: Awaited<ReturnType<typeof activePauses>>;
      let queue: Awaited<ReturnType<typeof queueGauges>>;
      try {
        [pauses, queue] = await Promise.all([activePauses(db, now), queueGauges(db, now, env)]);
      } catch {
        // the process's own counters are still worth a scrape: the database's gauges are absent, and up says why
        up.set(0);
        return [await health.metrics()];
      }
      up.set(1);
      paused.reset();
      pauseLeft.reset();
      for (const p of pauses) {
        const l = labels.model(p.model);
        paused.set(l, 1);
        pauseLeft.set(l, ms(p.pausedUntil - now));
      }
      if (!queue) return [await health.metrics(), await stored.metrics()];
      queueJobs.reset();
      if (queue.depth) for (const [state, n] of Object.entries(queue.depth)) queueJobs.set({ state }, n);
      oldest.set(queue.oldestQueuedAt === null ? 0 : ms(now - queue.oldestQueuedAt));
      workers.set(queue.liveWorkers);
      return [await health.metrics(), await stored.metrics(), await queued.metrics()];
    },
  };
}
