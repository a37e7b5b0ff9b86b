// One rate-limit gate across the cluster (DESIGN: Transport retry and rate limits, "One gate
// across the cluster"; Storage). In PostgreSQL mode every process's gate reads the pauses of
// rate_limit_pauses from here, synchronously, out of a map this module keeps current: a committed
// change of a pause is announced on the channel `aqven_pause` (NOTIFY, payload: the model string),
// each process keeps one LISTEN connection per database and re-reads the announced model's row,
// and the whole table is re-read every PAUSE_POLL_MS in case a notice was lost (a reconnect, a
// pooler that does not pass LISTEN on). A change wakes the gate's waiters of that model.
//
// The probe after a pause is a claim on the row (probe_owner, probe_until): one process wins it,
// renews it while its probe is out, and ends it — a probe without a 429 deletes the row (every
// waiter in the cluster goes on), one with a 429 has set a new pause (which frees the claim). A
// dead prober's claim lapses PROBE_CLAIM_TTL_MS after its last renewal.
import { and, eq, isNull, lt, lte, or } from 'drizzle-orm';
import pg from 'pg';
import type { ClusterPauses, ProbeClaim, ProbeOutcome } from '@/lib/engine/types';
import { PROCESS_OWNER } from './run-lease';
import type { Db, PgDb } from './types';

/** the NOTIFY channel of pause changes; the payload is the model string */
export const PAUSE_CHANNEL = 'aqven_pause';
/** the safety poll: the whole pause table re-read this often, notices or not */
export const PAUSE_POLL_MS = 1_000;
/** a probe claim not renewed for this long lapses (its owner died): another process may probe */
export const PROBE_CLAIM_TTL_MS = 10_000;
/** the first read of the pauses holds a call back at most this long (a database that does not answer) */
const READY_MAX_MS = 2_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

// Neither names a column of the schema (like PRAGMAs and transaction control, DESIGN: Storage,
// "Typed statements"): the channel and the model are the only values.
const NOTIFY = 'SELECT pg_notify($1, $2)';
const LISTEN = `LISTEN ${PAUSE_CHANNEL}`;

export interface ClusterGateOptions {
  /** who claims probes (default: this process, PROCESS_OWNER); tests stand for two processes in one */
  owner?: string;
  /** keep a LISTEN connection (default true); false leaves only the poll (measured in DESIGN) */
  listen?: boolean;
  pollMs?: number;
  claimTtlMs?: number;
}

/** The pauses of one PostgreSQL database as this process knows them, and the cluster's hooks for the gate. */
export interface ClusterGate extends ClusterPauses {
  /** paused_until of the model's stored pause, or null (synchronous: the gate asks on every look) */
  get(model: string): number | null;
  /** this process's own pause (setPause): known here at once, announced once `committed` settles */
  noteOwnPause(model: string, until: number, committed: Promise<unknown>): void;
  /** re-reads every stored pause now */
  refresh(): Promise<void>;
  /** resolves once the LISTEN connection is up (tests) */
  listening(): Promise<void>;
  stop(): Promise<void>;
}

type Row = { until: number; owner: string | null };

const gates = new WeakMap<PgDb, ClusterGate>();

/** The cluster gate of `db`, one per database per process (`opts` count when it is first made). */
export function clusterGate(db: PgDb, opts: ClusterGateOptions = {}): ClusterGate {
  let g = gates.get(db);
  if (!g) {
    g = createClusterGate(db, opts);
    gates.set(db, g);
  }
  return g;
}

/** Stops the listener and poll of `db`'s cluster gate, if this process made one (the database is being closed). */
export async function stopClusterGate(db: PgDb): Promise<void> {
  const g = gates.get(db);
  gates.delete(db);
  await g?.stop();
}

/** Tells every process that the model's stored pause changed (an editor cleared it on /providers). */
export async function announcePauseChange(db: Db, model: string): Promise<void> {
  if (db.dialect !== 'pg') return; // SQLite: every process reads the file on each look
  await db.pool.query(NOTIFY, [PAUSE_CHANNEL, model]);
}

/** A socket that does not keep the process alive: the listener outlives no command. */
function unrefSocket(c: pg.Client): void {
  (c.connection?.stream as { unref?: () => void } | undefined)?.unref?.();
}

export function createClusterGate(db: PgDb, opts: ClusterGateOptions = {}): ClusterGate {
  const owner = opts.owner ?? PROCESS_OWNER;
  const ttl = opts.claimTtlMs ?? PROBE_CLAIM_TTL_MS;
  const p = db.t.rateLimitPauses;

  const rows = new Map<string, Row>();
  const watchers = new Map<string, Set<() => void>>();
  // Reads are numbered when they start; a read answers for a model only if no later one has (a
  // poll that started before a notice's re-read must not bring the old row back).
  let readSeq = 0;
  const answered = new Map<string, number>();
  /** own pauses whose commit is in flight: no read from before it may hide them */
  const pendingOwn = new Map<string, number>();
  /** settles once the last own pause of the model is committed and announced */
  const pendingCommit = new Map<string, Promise<void>>();
  /** renewal of the claims this process holds */
  const claims = new Map<string, NodeJS.Timeout>();
  let stopped = false;

  const fire = (model: string) => {
    for (const f of [...(watchers.get(model) ?? [])]) f();
  };
  /** `noticed`: a notice said the row changed, so its waiters look again even if this read shows nothing new here */
  const apply = (model: string, row: Row | null, seq: number, noticed = false) => {
    if (seq <= (answered.get(model) ?? 0)) return;
    answered.set(model, seq);
    const own = pendingOwn.get(model);
    const next = own !== undefined && (row === null || own > row.until) ? { until: own, owner: null } : row;
    const before = rows.get(model);
    if (next) rows.set(model, next);
    else rows.delete(model);
    if (noticed || before?.until !== next?.until || (before?.owner ?? null) !== (next?.owner ?? null)) fire(model);
  };

  const readAll = async () => {
    const seq = ++readSeq;
    const got = await db.q.select({ model: p.model, until: p.pausedUntil, owner: p.probeOwner }).from(p);
    const seen = new Set<string>();
    for (const r of got) {
      seen.add(r.model);
      apply(r.model, { until: r.until, owner: r.owner }, seq);
    }
    for (const m of [...rows.keys()]) if (!seen.has(m)) apply(m, null, seq);
  };
  const readOne = async (model: string, noticed = false) => {
    const seq = ++readSeq;
    const got = await db.q.select({ until: p.pausedUntil, owner: p.probeOwner, probeUntil: p.probeUntil }).from(p).where(eq(p.model, model));
    const row = got[0] ?? null;
    apply(model, row && { until: row.until, owner: row.owner }, seq, noticed);
    return row;
  };
  // a burst of notices for one model costs one read in flight and one after it
  const reading = new Set<string>();
  const dirty = new Set<string>();
  const reread = (model: string) => {
    if (reading.has(model)) return void dirty.add(model);
    reading.add(model);
    readOne(model, true)
      .catch(() => undefined) // the poll reads it again
      .finally(() => {
        reading.delete(model);
        if (dirty.delete(model) && !stopped) reread(model);
      });
  };
  const notify = (model: string) => db.pool.query(NOTIFY, [PAUSE_CHANNEL, model]).then(() => undefined);

  // The LISTEN connection: its own client (a pooled one would be handed to other queries),
  // reconnected with a growing delay; every reconnect re-reads the table (notices sent meanwhile
  // were lost). A lost connection is said once per outage.
  let client: pg.Client | null = null;
  let delay = RECONNECT_MIN_MS;
  let told = false;
  let onListening!: () => void;
  const listeningP = new Promise<void>((r) => (onListening = r));
  const poolGone = () => db.pool.ending || db.pool.ended;
  const connect = async () => {
    if (stopped) return;
    if (poolGone()) return void stop();
    // keepAlive: a connection the server or the network dropped without a word is noticed
    const c = new pg.Client({ connectionString: db.url, keepAlive: true, connectionTimeoutMillis: 10_000 });
    let gone = false;
    const lost = (err: unknown) => {
      if (gone) return;
      gone = true;
      if (client === c) client = null;
      void c.end().catch(() => undefined);
      if (stopped) return;
      if (poolGone()) return void stop();
      if (!told)
        console.error(
          `aqven: the rate-limit listener lost its PostgreSQL connection (${db.name}): ${err instanceof Error ? err.message : 'closed'}; reconnecting (the pauses are polled every ${pollMs / 1000} s meanwhile)`,
        );
      told = true;
      setTimeout(() => void connect(), delay).unref();
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    };
    c.on('error', lost);
    c.on('end', () => lost(null));
    c.on('notification', (msg) => {
      if (msg.channel === PAUSE_CHANNEL && msg.payload) reread(msg.payload);
    });
    try {
      await c.connect();
      unrefSocket(c);
      await c.query(LISTEN);
    } catch (err) {
      return lost(err);
    }
    if (stopped || gone) return void c.end().catch(() => undefined);
    client = c;
    delay = RECONNECT_MIN_MS;
    told = false;
    onListening();
    void readAll().catch(() => undefined);
  };

  const pollMs = opts.pollMs ?? PAUSE_POLL_MS;
  let polling = false;
  const poll = setInterval(() => {
    if (poolGone()) return void stop();
    if (polling) return;
    polling = true;
    readAll()
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, pollMs);
  poll.unref();

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    clearInterval(poll);
    for (const t of claims.values()) clearInterval(t);
    claims.clear();
    if (gates.get(db) === gate) gates.delete(db);
    const c = client;
    client = null;
    await c?.end().catch(() => undefined);
  };

  /** renews the claim while the probe is out; `offset` carries the gate's clock onto the wall clock */
  const hold = (model: string, now: number) => {
    const offset = now - Date.now();
    const t = setInterval(() => {
      if (poolGone()) return void clearInterval(t);
      void db.q
        .update(p)
        .set({ probeUntil: Date.now() + offset + ttl })
        .where(and(eq(p.model, model), eq(p.probeOwner, owner)))
        .catch(() => undefined);
    }, ttl / 4);
    t.unref();
    claims.set(model, t);
  };
  const unhold = (model: string) => {
    clearInterval(claims.get(model));
    claims.delete(model);
  };

  const claimProbe = async (model: string, now: number): Promise<ProbeClaim> => {
    try {
      // this process's own new pause goes into the row before anyone probes it
      await pendingCommit.get(model);
      const seq = ++readSeq;
      const won = await db.q
        .update(p)
        .set({ probeOwner: owner, probeUntil: now + ttl })
        .where(and(eq(p.model, model), lte(p.pausedUntil, now), or(isNull(p.probeOwner), isNull(p.probeUntil), lt(p.probeUntil, now))))
        .returning({ until: p.pausedUntil });
      if (won.length) {
        apply(model, { until: won[0]!.until, owner }, seq);
        unhold(model);
        hold(model, now);
        return { kind: 'won' };
      }
      const row = await readOne(model);
      if (!row) return { kind: 'none' };
      // a new pause: waited out first; else another process's probe is out until its claim lapses
      return { kind: 'taken', retryAt: row.until > now ? row.until : (row.probeUntil ?? now) + 1 };
    } catch {
      return { kind: 'won' }; // the database cannot be asked: the probe stays one per process
    }
  };

  const probeDone = (model: string, outcome: ProbeOutcome) => {
    unhold(model);
    void (async () => {
      if (outcome === 'ok') {
        // the pause is over for everyone: the row goes (unless a new pause replaced it: the claim is no longer ours)
        const seq = ++readSeq;
        const gone = await db.q
          .delete(p)
          .where(and(eq(p.model, model), eq(p.probeOwner, owner)))
          .returning({ model: p.model });
        if (!gone.length) return;
        apply(model, null, seq);
      } else {
        // a 429's new pause frees the claim as it is written (setPause); this frees it otherwise
        await pendingCommit.get(model);
        const seq = ++readSeq;
        const freed = await db.q
          .update(p)
          .set({ probeOwner: null, probeUntil: null })
          .where(and(eq(p.model, model), eq(p.probeOwner, owner)))
          .returning({ until: p.pausedUntil });
        if (!freed.length) return;
        apply(model, { until: freed[0]!.until, owner: null }, seq);
      }
      await notify(model);
    })().catch(() => undefined); // a claim not ended lapses by itself
  };

  const gate: ClusterGate = {
    get: (model) => rows.get(model)?.until ?? null,
    noteOwnPause: (model, until, committed) => {
      pendingOwn.set(model, Math.max(pendingOwn.get(model) ?? -Infinity, until));
      const before = rows.get(model);
      if (!before || until > before.until) {
        rows.set(model, { until, owner: null });
        fire(model);
      }
      const done: Promise<void> = committed
        .finally(() => {
          // committed (or not at all): the row answers from here on, not the pause noted here — a
          // read that started before the commit may still land, and no longer answers for the model
          if (pendingCommit.get(model) !== done) return;
          pendingOwn.delete(model);
          answered.set(model, ++readSeq);
        })
        .then(() => notify(model))
        .catch(() => undefined)
        .finally(() => {
          if (pendingCommit.get(model) === done) pendingCommit.delete(model);
        });
      pendingCommit.set(model, done);
    },
    refresh: readAll,
    listening: () => listeningP,
    stop,
    ready: () => ready,
    claimProbe,
    probeDone,
    watch: (model, onChange) => {
      let set = watchers.get(model);
      if (!set) watchers.set(model, (set = new Set()));
      set.add(onChange);
      return () => {
        set.delete(onChange);
        if (!set.size) watchers.delete(model);
      };
    },
  };
  const first = readAll().catch(() => undefined);
  const ready = Promise.race([first, new Promise<void>((r) => setTimeout(r, READY_MAX_MS).unref())]);
  if (opts.listen !== false) void connect();
  return gate;
}
