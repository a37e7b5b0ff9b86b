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
import type { AttemptRecord, EngineEvent, TryRecord, UsageTotals } from '@/lib/engine/types';
import type { ObservedRun, RunObserver, RunWatch } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import { redactionCounts, type PiiKind } from '@/lib/redact';
import { MetricLabels, type ModelLabels } from './metric-labels';
import { talliedCounter, type TalliedCounter } from './tallied-counter';

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

type Labels<L extends string> = Record<L, string>;
const MODEL = ['provider', 'model'] as const;

/** The series the observer counts into: counters kept by talliedCounter, histograms prom-client's own. */
function runSeries(registers: Registry[]) {
  return {
    attempts: talliedCounter({
      name: 'aqven_attempts_total',
      help: 'Attempts ended in this process (one answer of one model for a node), by outcome (ok, error, refusal, truncated; interrupted: none), cause and the action that followed',
      labelNames: [...MODEL, 'outcome', 'cause', 'action'],
      registers,
    }),
    attemptSeconds: new Histogram({
      name: 'aqven_attempt_duration_seconds',
      help: "An attempt's duration from its start to its end, its transport tries and waits included",
      labelNames: [...MODEL, 'outcome'],
      buckets: ATTEMPT_BUCKETS,
      registers,
    }),
    tokens: talliedCounter({
      name: 'aqven_tokens_total',
      help: "Tokens the provider reported for this process's attempts, by type (input, output; reasoning tokens are part of output)",
      labelNames: [...MODEL, 'type'],
      registers,
    }),
    cost: talliedCounter({
      name: 'aqven_cost_usd_total',
      help: "Cost in USD of this process's attempts, as recorded (the provider's stated charge, else the catalogue's price)",
      labelNames: MODEL,
      registers,
    }),
    usageUnknown: talliedCounter({
      name: 'aqven_attempts_usage_unknown_total',
      help: 'Attempts whose reply was not read to its end: the provider may have billed tokens that aqven_tokens_total and aqven_cost_usd_total lack',
      labelNames: MODEL,
      registers,
    }),
    tries: talliedCounter({
      name: 'aqven_transport_tries_total',
      help: 'HTTP exchanges (transport tries) of attempts, by result: ok, or the try error (rate_limited, server_error, timeout, connection, client_error)',
      labelNames: [...MODEL, 'result'],
      registers,
    }),
    retries: talliedCounter({
      name: 'aqven_transport_retries_total',
      help: 'Transport tries after the first of their attempt, by the error of the try before (why it was retried)',
      labelNames: [...MODEL, 'reason'],
      registers,
    }),
    pausesSet: talliedCounter({
      name: 'aqven_rate_limit_pauses_total',
      help: "Rate-limit pauses this process's 429s set or lengthened (every call of the model waits)",
      labelNames: MODEL,
      registers,
    }),
    nodeSeconds: new Histogram({
      name: 'aqven_node_duration_seconds',
      help: "A node's duration from its turn's start to its end (wall time), by status (succeeded, failed)",
      labelNames: ['flow', 'node', 'status'],
      buckets: NODE_BUCKETS,
      registers,
    }),
    runs: talliedCounter({
      name: 'aqven_runs_total',
      help: 'Runs ended in this process, by flow, kind (flow, replay) and status (succeeded, failed, interrupted)',
      labelNames: ['flow', 'kind', 'status'],
      registers,
    }),
  };
}
type RunSeries = ReturnType<typeof runSeries>;

/** An attempt in flight: its model's labels, and the error of its last try (why the next is a retry). */
interface InFlight {
  model: ModelLabels;
  lastError: TryRecord['error'];
}

/** One run as the metrics watch it: what its events add to the series. */
class RunTally implements RunWatch {
  private readonly flow: string;
  /** the attempts in flight by node and seq: a try's and an interruption's events name only those */
  private readonly inFlight = new Map<string, InFlight>();
  private readonly nodeStarts = new Map<string, number>();

  constructor(
    private readonly run: ObservedRun,
    private readonly s: RunSeries,
    private readonly labels: MetricLabels,
    private readonly now: () => number,
  ) {
    this.flow = labels.flow(run.flow);
  }

  event(e: ProgressEvent): void {
    if (e.type === 'engine') this.engine(e.node, e.event);
    else if (e.type === 'turn_start') for (const n of e.nodes) this.nodeStarts.set(n, this.now());
    else if (e.type === 'node_end') {
      const start = this.nodeStarts.get(e.node);
      this.nodeStarts.delete(e.node);
      if (start !== undefined) this.s.nodeSeconds.observe({ flow: this.flow, node: this.labels.node(e.node), status: e.result.status }, ms(this.now() - start));
    } else if (e.type === 'run_end') {
      const { flow } = this;
      const { kind } = this.run;
      const status = e.record.status;
      this.s.runs.add(`${flow}\u0000${kind}\u0000${status}`, () => ({ flow, kind, status }));
    }
  }

  private engine(node: string, e: EngineEvent): void {
    if (e.type === 'attempt_start') this.inFlight.set(`${node}\u0000${e.seq}`, { model: this.labels.model(e.model), lastError: null });
    else if (e.type === 'try_end') {
      const a = this.inFlight.get(`${node}\u0000${e.seq}`);
      if (a) this.tryEnded(a, e.try);
    } else if (e.type === 'attempt_end') {
      this.inFlight.delete(`${node}\u0000${e.attempt.seq}`);
      this.attemptEnded(this.labels.model(e.attempt.model), e.attempt);
    } else if (e.type === 'attempt_interrupted') {
      const key = `${node}\u0000${e.seq}`;
      const a = this.inFlight.get(key);
      this.inFlight.delete(key);
      if (!a) return;
      this.count(this.s.attempts, a.model, [INTERRUPTED, 'none', 'none'], (m) => ({ ...m, outcome: INTERRUPTED, cause: 'none', action: 'none' }));
      this.usage(a.model, e.usage, e.usageUnknown);
    } else if (e.type === 'rate_limit_pause') {
      const m = this.labels.model(e.model);
      this.s.pausesSet.add(m.key, () => m.labels);
    }
  }

  private tryEnded(a: InFlight, t: TryRecord): void {
    const result = t.error ?? 'ok';
    this.count(this.s.tries, a.model, [result], (m) => ({ ...m, result }));
    if (t.tryNo > 1) {
      const reason = a.lastError ?? 'none';
      this.count(this.s.retries, a.model, [reason], (m) => ({ ...m, reason }));
    }
    a.lastError = t.error;
  }

  private attemptEnded(m: ModelLabels, a: AttemptRecord): void {
    const { outcome, action } = a;
    const cause = a.cause ?? 'none';
    this.count(this.s.attempts, m, [outcome, cause, action], (l) => ({ ...l, outcome, cause, action }));
    this.s.attemptSeconds.observe({ ...m.labels, outcome }, ms(a.finishedAt - a.startedAt));
    this.usage(m, a.usage, a.usageUnknown === true);
  }

  private usage(m: ModelLabels, u: UsageTotals, unknown: boolean): void {
    this.count(this.s.tokens, m, ['input'], (l) => ({ ...l, type: 'input' }), u.inputTokens);
    this.count(this.s.tokens, m, ['output'], (l) => ({ ...l, type: 'output' }), u.outputTokens);
    this.s.cost.add(m.key, () => m.labels, u.costUsd);
    if (unknown) this.s.usageUnknown.add(m.key, () => m.labels);
  }

  /** Adds `n` to a model's series whose other labels have the values `rest`. */
  private count<L extends string>(c: TalliedCounter<L>, m: ModelLabels, rest: string[], labels: (model: ModelLabels['labels']) => Labels<L>, n = 1): void {
    c.add(`${m.key}\u0000${rest.join('\u0000')}`, () => labels(m.labels), n);
  }
}

export function createMetrics(o: MetricsOptions = {}): AqvenMetrics {
  const now = o.now ?? Date.now;
  const registry = new Registry();
  const registers = [registry];
  const labels = new MetricLabels(o.labelValuesMax);
  const series = runSeries(registers);
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
  return {
    registry,
    observer: { watch: (run) => new RunTally(run, series, labels, now) },
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
        const l = labels.model(p.model).labels;
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
