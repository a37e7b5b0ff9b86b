// `aqven worker` (DESIGN: Storage, "Workers and the queue"; CLI): graphile-worker delivers the jobs
// of queued runs; each delivery claims its run by a compare-and-set on the row and runs it under
// the run's lease, one run per slot. The lease, not the job, is the run's liveness: every
// LEASE_HEARTBEAT_MS the worker writes its row in `workers`, takes over runs whose lease expired
// (their worker died, or handed them back) when it has a free slot, and gives queued runs whose job
// is stuck a new job. Stopping drains: no new run is taken, the runs in progress may finish for a
// while, and the rest are handed back for another worker to take over at once.
import { explainHint } from '@/lib/shared/run-codes';
import { run, type Runner, type Task } from 'graphile-worker';
import { expiredLeases, LEASE_HEARTBEAT_MS, leaseKeeper, PROCESS_OWNER } from '@/db/run-lease';
import type { PgDb, RunStatus } from '@/db/types';
import { takeOverRun } from '@/lib/flow/resume';
import { beginRun, RunNotRecordedError, type StartedRun } from '@/lib/flow/run-flow';
import type { RunRecord } from '@/lib/flow/run-record';
import { currentSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { startUsageLookups } from '@/lib/flow/usage-lookup';
import { claimRun, failClaimedRun, type Claim } from './claim';
import { ensureQueueSchema, queueLogger, queueLoggerTo, redeliverStuckRuns, RUN_TASK, runIdOf } from '@/db/queue-jobs';
import { beatWorker, registerWorker, stopWorkerRow } from './worker-row';
import { queryErrorText } from '@/db/pg';

/** One run this worker ended: what `aqven worker` prints as a line. */
export interface RunEnd {
  runId: string;
  flow: string;
  /** the run's final status; `handed back` when the worker stopped before it finished */
  status: RunStatus | 'handed back' | 'lost';
  attempts: number;
  durationMs: number;
  /** taken over from a worker that died or handed it back */
  resumed: boolean;
  /** a taken-over run's whole duration, from its start (`durationMs` is this worker's part), as its page shows it */
  sinceStartMs?: number;
  /** why, for a run that did not end on its own: refused by the claim, lost, handed back */
  note?: string;
  /** it never ran: refused at its claim (its flow or input no longer fit), or it could not be started */
  refused?: boolean;
}

/** A run this worker took: claimed from its job, or taken over after its lease expired. */
export interface RunTaken {
  runId: string;
  /** unknown (null) for a take-over until the run is read */
  flow: string | null;
  takenOver: boolean;
  /** the fence of this worker's lease: how many times the run has been taken, this time included */
  fence: number;
}

export interface WorkerStats {
  concurrency: number;
  running: number;
  ended: number;
  byStatus: Record<string, number>;
  draining: boolean;
}

export interface WorkerOptions {
  /** the session to run with (PostgreSQL mode): moved to the newest snapshot before each run */
  session: Session;
  concurrency: number;
  onRunEnd?: (r: RunEnd) => void;
  /** a run was claimed or taken over (before it starts) */
  onRunTaken?: (r: RunTaken) => void;
  /** graphile-worker's own warnings and errors (its info is dropped); absent: on stderr */
  onQueueLog?: (level: 'error' | 'warning', message: string) => void;
  /** something changed (a run started or ended): for a progress line */
  onChange?: (s: WorkerStats) => void;
  /** a problem worth a line on stderr; the worker carries on */
  onWarning?: (message: string) => void;
}

interface Active {
  started: StartedRun;
  flow: string;
  resumed: boolean;
  since: number;
  handedBack: string | null;
}

/** The worker's slots: one run per slot, whether it came as a job or as a take-over. */
class Slots {
  private used = 0;
  private waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private closed: Error | null = null;

  constructor(readonly size: number) {}

  get free(): number {
    return this.size - this.used;
  }

  tryTake(): boolean {
    if (this.closed || this.used >= this.size) return false;
    this.used++;
    return true;
  }

  take(): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next)
      next.resolve(); // the slot passes on as it is
    else this.used--;
  }

  /** No slot is handed out from now on; whoever waits for one is refused with `why`. */
  close(why: Error): void {
    this.closed = why;
    for (const w of this.waiting.splice(0)) w.reject(why);
  }
}

/** an error in one line: a failed query says the database's reason, not its SQL and run data */
const message = queryErrorText;
const attemptsOf = (r: RunRecord) => r.nodes.reduce((n, x) => n + x.attempts.length, 0);
/** A run's duration from its start to its end, as its record has them (undefined while it has no end). */
const sinceStart = (r: RunRecord): number | undefined => (r.finishedAt ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : undefined);

export class QueueWorker {
  /** this worker's row in `workers`, and the owner its leases name */
  readonly id = PROCESS_OWNER;
  private session: Session;
  private refreshing: Promise<Session> | null = null;
  /** the snapshot last refused by check, so the warning is printed once */
  private refusedSnapshot: string | null = null;
  private readonly slots: Slots;
  private readonly active = new Map<string, Active>();
  private readonly byStatus: Record<string, number> = {};
  private ended = 0;
  private runner: Runner | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** stops the background lookups of cut-off answers' usage (lib/flow/usage-lookup.ts) */
  private stopLookups: (() => void) | null = null;
  private ticking = false;
  private draining = false;
  /** set once the drain's wait is over: every run in progress, and any that starts from now on, is handed back with it */
  private handingBack: string | null = null;
  /** every job being processed and every take-over under way, from delivery to the run's end */
  private readonly busy = new Set<Promise<unknown>>();
  private cutShort: () => void = () => {};
  private readonly cut = new Promise<void>((resolve) => (this.cutShort = resolve));

  private constructor(
    private readonly db: PgDb,
    private readonly o: WorkerOptions,
  ) {
    this.session = o.session;
    this.slots = new Slots(o.concurrency);
  }

  /** Registers the worker, installs the queue's schema if need be, and starts taking jobs. */
  static async start(o: WorkerOptions): Promise<QueueWorker> {
    const mode = o.session.mode;
    if (mode.kind !== 'queue') throw new Error('aqven worker needs AQVEN_DATABASE_URL=postgres://…: in SQLite mode a run runs in the process that starts it');
    const db = mode.db;
    const w = new QueueWorker(db, o);
    await ensureQueueSchema(db);
    await registerWorker(db, { id: w.id, concurrency: o.concurrency });
    const task: Task = (payload) => w.track(w.onJob(payload));
    w.runner = await run({
      connectionString: db.url,
      // graphile-worker's own connections: its LISTEN, and fetching and completing jobs (the runs use the database's pool)
      maxPoolSize: Math.min(10, o.concurrency + 2),
      concurrency: o.concurrency,
      noHandleSignals: true,
      taskList: { [RUN_TASK]: task },
      parsedCronItems: [],
      logger: o.onQueueLog ? queueLoggerTo(o.onQueueLog) : queueLogger,
    });
    w.timer = setInterval(() => void w.tick(), LEASE_HEARTBEAT_MS);
    w.stopLookups = startUsageLookups(db, () => ({ providers: w.session.providers, env: w.session.env, simulated: w.session.simulated !== null }), {
      log: (line) => o.onWarning?.(line),
    });
    void w.tick(); // a worker starting after others died takes their runs over at once
    return w;
  }

  /** graphile-worker's promise: settles when the queue stops (rejects if it failed). */
  get queueDone(): Promise<void> {
    return this.runner?.promise ?? Promise.resolve();
  }

  stats(): WorkerStats {
    return { concurrency: this.o.concurrency, running: this.active.size, ended: this.ended, byStatus: { ...this.byStatus }, draining: this.draining };
  }

  /** A job: one run. Throws only when the run was not claimed, so graphile-worker delivers the job again later. */
  private async onJob(payload: unknown): Promise<void> {
    const runId = runIdOf(payload);
    if (!runId) {
      this.o.onWarning?.(`a job of task ${RUN_TASK} without a run id was dropped: ${JSON.stringify(payload)}`);
      return;
    }
    await this.slots.take(); // refused while draining: the job goes back to the queue
    try {
      const s = await this.fresh();
      const claim = await claimRun(this.db, runId, { project: s.project, snapshotId: s.snapshotId, projectHash: s.projectHash });
      if (claim.kind === 'claimed') {
        this.o.onRunTaken?.({ runId, flow: claim.flow, takenOver: false, fence: claim.lease.fence });
        await this.runClaimed(s, runId, claim);
      } else if (claim.kind === 'refused')
        this.end({ runId, flow: claim.flow, status: 'failed', attempts: 0, durationMs: 0, resumed: false, note: claim.error.code, refused: true });
      else if (claim.kind === 'expired') await this.takeOver(s, runId, claim.fence);
      // held (another worker runs it: a duplicate delivery), over (finished or cancelled), missing: the job is done
    } finally {
      this.slots.give();
    }
  }

  /** The session the next run would run with: the newest snapshot's (the periodic alert check reads its project). */
  current(): Promise<Session> {
    return this.fresh();
  }

  /** The session of the newest snapshot (one query when it has not changed); a snapshot failing check is refused once, loudly. */
  private fresh(): Promise<Session> {
    this.refreshing ??= currentSession(this.session)
      .then(
        (s) => (this.session = s),
        (err: unknown) => {
          const why = message(err);
          if (err instanceof ProjectInvalidError && this.refusedSnapshot !== why) this.o.onWarning?.(`${why}; runs go on under snapshot ${this.session.snapshotId}`);
          else if (!(err instanceof ProjectInvalidError)) this.o.onWarning?.(`could not look for a newer snapshot: ${why}`);
          this.refusedSnapshot = why;
          return this.session;
        },
      )
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async runClaimed(s: Session, runId: string, claim: Extract<Claim, { kind: 'claimed' }>): Promise<void> {
    const { flow, input, lease, startedBy, traceparent } = claim;
    let started: StartedRun;
    try {
      // who queued the run: its record says so, and their spend budget applies to its attempts
      started = await beginRun({
        project: s.project,
        flow,
        input,
        providers: s.providers,
        env: s.env,
        db: s.db,
        runId,
        lease,
        snapshotId: s.snapshotId,
        projectHash: s.projectHash,
        startedBy,
        traceparent,
      });
    } catch (err) {
      // the claim checked flow and input against this very project, so this is a bug: the run must not stay claimed
      const error = {
        code: 'internal_error',
        node: null,
        message: message(err),
        hint: explainHint('internal_error', 'The worker could not start the run; it is recorded as failed.'),
      };
      await failClaimedRun(this.db, lease, error).catch(() => undefined);
      this.end({ runId, flow, status: 'failed', attempts: 0, durationMs: 0, resumed: false, note: error.message, refused: true });
      return;
    }
    await this.follow(started, flow, false);
  }

  /** Takes over a run whose lease expired (compare-and-set on `fence`) and resumes it; nothing when another worker was first. */
  private async takeOver(s: Session, runId: string, fence: number): Promise<void> {
    const started = await takeOverRun({ db: this.db, runId, fence, project: s.project, providers: s.providers, env: s.env });
    if (!started) return;
    this.o.onRunTaken?.({ runId, flow: null, takenOver: true, fence: fence + 1 });
    await this.follow(started, '', true);
  }

  /** Keeps `p` in `busy` until it settles (the drain waits for it); resolves or rejects as `p` does. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.busy.add(p);
    const forget = () => this.busy.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** Waits for a run this worker runs, and reports how it ended. */
  private async follow(started: StartedRun, flow: string, resumed: boolean): Promise<void> {
    const a: Active = { started, flow, resumed, since: Date.now(), handedBack: null };
    this.active.set(started.runId, a);
    this.changed();
    if (this.handingBack) void this.handBack(a, this.handingBack); // started while the drain was handing runs back
    try {
      const record = await started.done;
      // a run handed back is left `running`, for another worker to resume
      const status = a.handedBack && record.status === 'running' ? 'handed back' : record.status;
      const note = status === 'handed back' ? a.handedBack! : record.error ? `${record.error.code}${record.error.node ? ` at ${record.error.node}` : ''}` : undefined;
      const sinceStartMs = resumed ? sinceStart(record) : undefined;
      this.end({
        runId: record.id,
        flow: record.flow,
        status,
        attempts: attemptsOf(record),
        durationMs: Date.now() - a.since,
        resumed,
        note,
        ...(sinceStartMs !== undefined && { sinceStartMs }),
      });
    } catch (err) {
      const record = err instanceof RunNotRecordedError ? err.record : null;
      const status = a.handedBack ? 'handed back' : 'lost';
      this.end({
        runId: started.runId,
        flow: record?.flow ?? flow,
        status,
        attempts: record ? attemptsOf(record) : 0,
        durationMs: Date.now() - a.since,
        resumed,
        note: a.handedBack ?? message(err),
      });
    } finally {
      this.active.delete(started.runId);
      this.changed();
    }
  }

  private end(r: RunEnd): void {
    this.ended++;
    this.byStatus[r.status] = (this.byStatus[r.status] ?? 0) + 1;
    this.o.onRunEnd?.(r);
  }

  private changed(): void {
    this.o.onChange?.(this.stats());
  }

  /** Every LEASE_HEARTBEAT_MS: the worker's row, then (unless draining) dead runs taken over and stuck jobs given again. */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await beatWorker(this.db, this.id, this.active.size).catch((err: unknown) => this.o.onWarning?.(`could not write the worker's heartbeat: ${message(err)}`));
      if (this.draining) return;
      await this.takeOverDead().catch((err: unknown) => this.o.onWarning?.(`could not look for dead runs: ${message(err)}`));
      if (this.draining) return;
      await redeliverStuckRuns(this.db).catch((err: unknown) => this.o.onWarning?.(`could not look for stuck jobs: ${message(err)}`));
    } finally {
      this.ticking = false;
    }
  }

  /** Runs whose lease expired, taken over while a slot is free (in random order: workers sweeping together spread out). */
  private async takeOverDead(): Promise<void> {
    if (this.slots.free <= 0) return;
    const dead = await expiredLeases(this.db, Date.now(), leaseKeeper(this.db).heldRunIds());
    for (const d of dead.sort(() => Math.random() - 0.5)) {
      if (this.draining || !this.slots.tryTake()) return;
      const s = await this.fresh();
      void this.track(
        this.takeOver(s, d.runId, d.fence)
          .catch((err: unknown) => this.o.onWarning?.(`could not take run ${d.runId} over: ${message(err)}`))
          .finally(() => this.slots.give()),
      );
    }
  }

  /**
   * Stops: no new run is taken (jobs waiting for a slot go back to the queue), the runs in progress
   * may finish for up to `timeoutMs` (or until cutDrainShort()), then the rest — and any run a job
   * or take-over under way starts after that — are handed back with `reason`. Resolves once every
   * job and take-over is over, graphile-worker has stopped and the worker's row says so.
   */
  async drain(timeoutMs: number, reason: string): Promise<{ finished: number; handedBack: number }> {
    this.draining = true;
    this.changed();
    const handedBack = () => this.byStatus['handed back'] ?? 0;
    const before = { ended: this.ended, handedBack: handedBack() };
    this.slots.close(new Error('the worker is stopping: the job goes back to the queue'));
    const stopped = (this.runner?.stop() ?? Promise.resolve()).catch((err: unknown) => this.o.onWarning?.(`graphile-worker did not stop cleanly: ${message(err)}`));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.idle(), late, this.cut]);
    clearTimeout(timer);
    this.handingBack = reason;
    await Promise.all([...this.active.values()].map((a) => this.handBack(a, reason)));
    await this.idle();
    await stopped;
    if (this.timer) clearInterval(this.timer);
    this.stopLookups?.();
    await stopWorkerRow(this.db, this.id).catch((err: unknown) => this.o.onWarning?.(`could not mark the worker stopped: ${message(err)}`));
    const back = handedBack() - before.handedBack;
    return { finished: this.ended - before.ended - back, handedBack: back };
  }

  private async handBack(a: Active, reason: string): Promise<void> {
    if (a.handedBack) return;
    a.handedBack = reason;
    try {
      await a.started.handBack(reason);
    } catch (err) {
      this.o.onWarning?.(`run ${a.started.runId} could not be handed back: ${message(err)}`);
    }
  }

  /** Ends drain()'s wait now: the runs still going are handed back at once. */
  cutDrainShort(): void {
    this.cutShort();
  }

  /** Resolves once no job is being processed, no take-over is under way and no run is going. */
  private async idle(): Promise<void> {
    while (this.busy.size > 0 || this.active.size > 0) {
      await Promise.allSettled([...this.busy, ...[...this.active.values()].map((a) => a.started.done)]);
    }
  }
}
