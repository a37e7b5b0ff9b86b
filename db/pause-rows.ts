// The pauses of rate_limit_pauses as this process knows them (db/cluster-gate.ts): a map kept
// current by numbered reads, this process's own pauses known at once while their commit is in
// flight, and the watchers of each model woken when its row changes.
import { eq } from 'drizzle-orm';
import type { PgDb } from './types';

/** the NOTIFY channel of pause changes; the payload is the model string */
export const PAUSE_CHANNEL = 'aqven_pause';
// Names no column of the schema (like PRAGMAs and transaction control, DESIGN: Storage, "Typed
// statements"): the channel and the model are the only values.
const NOTIFY = 'SELECT pg_notify($1, $2)';

/** Tells every process listening on `db` that the model's stored pause changed. */
export async function notifyPause(db: PgDb, model: string): Promise<void> {
  await db.pool.query(NOTIFY, [PAUSE_CHANNEL, model]);
}

export type PauseRow = { until: number; owner: string | null };

export class PauseRows {
  private readonly rows = new Map<string, PauseRow>();
  private readonly watchers = new Map<string, Set<() => void>>();
  // Reads are numbered when they start; a read answers for a model only if no later one has (a
  // poll that started before a notice's re-read must not bring the old row back).
  private readSeq = 0;
  private readonly answered = new Map<string, number>();
  /** own pauses whose commit is in flight: no read from before it may hide them */
  private readonly pendingOwn = new Map<string, number>();
  /** settles once the last own pause of the model is committed and announced */
  private readonly pendingCommit = new Map<string, Promise<void>>();
  // a burst of notices for one model costs one read in flight and one after it
  private readonly reading = new Set<string>();
  private readonly dirty = new Set<string>();
  /** set once the gate stops: no more re-reads */
  stopped = false;

  constructor(private readonly db: PgDb) {}

  get(model: string): number | null {
    return this.rows.get(model)?.until ?? null;
  }

  /** the number of a read (or write that answers like one) starting now */
  nextSeq(): number {
    return ++this.readSeq;
  }

  /** the own pause of the model is committed and announced (or failed to be) */
  committed(model: string): Promise<void> | undefined {
    return this.pendingCommit.get(model);
  }

  private fire(model: string): void {
    for (const f of [...(this.watchers.get(model) ?? [])]) f();
  }

  /** `noticed`: a notice said the row changed, so its waiters look again even if this read shows nothing new here */
  apply(model: string, row: PauseRow | null, seq: number, noticed = false): void {
    if (seq <= (this.answered.get(model) ?? 0)) return;
    this.answered.set(model, seq);
    const own = this.pendingOwn.get(model);
    const next = own !== undefined && (row === null || own > row.until) ? { until: own, owner: null } : row;
    const before = this.rows.get(model);
    if (next) this.rows.set(model, next);
    else this.rows.delete(model);
    if (noticed || before?.until !== next?.until || (before?.owner ?? null) !== (next?.owner ?? null)) this.fire(model);
  }

  async readAll(): Promise<void> {
    const p = this.db.t.rateLimitPauses;
    const seq = this.nextSeq();
    const got = await this.db.q.select({ model: p.model, until: p.pausedUntil, owner: p.probeOwner }).from(p);
    const seen = new Set<string>();
    for (const r of got) {
      seen.add(r.model);
      this.apply(r.model, { until: r.until, owner: r.owner }, seq);
    }
    for (const m of [...this.rows.keys()]) if (!seen.has(m)) this.apply(m, null, seq);
  }

  async readOne(model: string, noticed = false) {
    const p = this.db.t.rateLimitPauses;
    const seq = this.nextSeq();
    const got = await this.db.q.select({ until: p.pausedUntil, owner: p.probeOwner, probeUntil: p.probeUntil }).from(p).where(eq(p.model, model));
    const row = got[0] ?? null;
    this.apply(model, row && { until: row.until, owner: row.owner }, seq, noticed);
    return row;
  }

  /** A notice named the model: its row is read again (at most one read in flight and one after it). */
  reread(model: string): void {
    if (this.reading.has(model)) return void this.dirty.add(model);
    this.reading.add(model);
    this.readOne(model, true)
      .catch(() => undefined) // the poll reads it again
      .finally(() => {
        this.reading.delete(model);
        if (this.dirty.delete(model) && !this.stopped) this.reread(model);
      });
  }

  watch(model: string, onChange: () => void): () => void {
    let set = this.watchers.get(model);
    if (!set) this.watchers.set(model, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (!set.size) this.watchers.delete(model);
    };
  }

  /** this process's own pause: known here at once, announced once `committed` settles */
  noteOwnPause(model: string, until: number, committed: Promise<unknown>): void {
    this.pendingOwn.set(model, Math.max(this.pendingOwn.get(model) ?? -Infinity, until));
    const before = this.rows.get(model);
    if (!before || until > before.until) {
      this.rows.set(model, { until, owner: null });
      this.fire(model);
    }
    const done: Promise<void> = committed
      .finally(() => {
        // committed (or not at all): the row answers from here on, not the pause noted here — a
        // read that started before the commit may still land, and no longer answers for the model
        if (this.pendingCommit.get(model) !== done) return;
        this.pendingOwn.delete(model);
        this.answered.set(model, this.nextSeq());
      })
      .then(() => notifyPause(this.db, model))
      .catch(() => undefined)
      .finally(() => {
        if (this.pendingCommit.get(model) === done) this.pendingCommit.delete(model);
      });
    this.pendingCommit.set(model, done);
  }
}
