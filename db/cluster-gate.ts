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
//
// The parts: the rows as this process knows them (pause-rows.ts), the LISTEN connection
// (pause-listener.ts) and the probe's claim (probe-claims.ts); here they are put together with the
// safety poll.
import type { ClusterPauses } from '@/lib/engine/types';
import { listenForPauses, type PauseListener } from './pause-listener';
import { notifyPause, PauseRows } from './pause-rows';
import { probeClaims } from './probe-claims';
import { PROCESS_OWNER } from './run-lease';
import type { Db, PgDb } from './types';

export { PAUSE_CHANNEL } from './pause-rows';
/** the safety poll: the whole pause table re-read this often, notices or not */
export const PAUSE_POLL_MS = 1_000;
/** a probe claim not renewed for this long lapses (its owner died): another process may probe */
export const PROBE_CLAIM_TTL_MS = 10_000;
/** the first read of the pauses holds a call back at most this long (a database that does not answer) */
const READY_MAX_MS = 2_000;

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
  await notifyPause(db, model);
}

/** Re-reads the whole table every `pollMs` (one read at a time); stops the gate once the pool is ending. */
function pollPauses(db: PgDb, rows: PauseRows, pollMs: number, onPoolGone: () => void): NodeJS.Timeout {
  let polling = false;
  const poll = setInterval(() => {
    if (db.pool.ending || db.pool.ended) return void onPoolGone();
    if (polling) return;
    polling = true;
    rows
      .readAll()
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, pollMs);
  poll.unref();
  return poll;
}

export function createClusterGate(db: PgDb, opts: ClusterGateOptions = {}): ClusterGate {
  const rows = new PauseRows(db);
  const claims = probeClaims(db, rows, opts.owner ?? PROCESS_OWNER, opts.claimTtlMs ?? PROBE_CLAIM_TTL_MS);
  const pollMs = opts.pollMs ?? PAUSE_POLL_MS;
  const onPoolGone = () => void stop();
  const poll = pollPauses(db, rows, pollMs, onPoolGone);
  const first = rows.readAll().catch(() => undefined);
  const ready = Promise.race([first, new Promise<void>((r) => setTimeout(r, READY_MAX_MS).unref())]);
  // made before the listener starts: a pool already ending stops the gate from its first step
  let listener: PauseListener | null = null;
  let listening: Promise<void> = new Promise<void>(() => {});
  const stop = async () => {
    if (rows.stopped) return;
    rows.stopped = true;
    clearInterval(poll);
    claims.stop();
    if (gates.get(db) === gate) gates.delete(db);
    await listener?.close();
  };
  const gate: ClusterGate = {
    get: (model) => rows.get(model),
    noteOwnPause: (model, until, committed) => rows.noteOwnPause(model, until, committed),
    refresh: () => rows.readAll(),
    listening: () => listening,
    stop,
    ready: () => ready,
    claimProbe: claims.claimProbe,
    probeDone: claims.probeDone,
    watch: (model, onChange) => rows.watch(model, onChange),
  };
  if (opts.listen !== false) {
    listener = listenForPauses(db, rows, { pollMs, stopped: () => rows.stopped, onPoolGone });
    listening = listener.listening;
  }
  return gate;
}
