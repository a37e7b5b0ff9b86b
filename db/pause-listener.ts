// The LISTEN connection of the cluster gate (db/cluster-gate.ts): its own client (a pooled one
// would be handed to other queries), reconnected with a growing delay; every reconnect re-reads the
// table (notices sent meanwhile were lost). A lost connection is said once per outage.
import pg from 'pg';
import { PAUSE_CHANNEL, type PauseRows } from './pause-rows';
import type { PgDb } from './types';

const LISTEN = `LISTEN ${PAUSE_CHANNEL}`;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/** A socket that does not keep the process alive: the listener outlives no command. */
function unrefSocket(c: pg.Client): void {
  (c.connection?.stream as { unref?: () => void } | undefined)?.unref?.();
}

export interface PauseListener {
  /** resolves once the LISTEN connection is up */
  listening: Promise<void>;
  /** ends the connection (the gate stops) */
  close(): Promise<void>;
}

/**
 * Keeps a LISTEN connection on `db` whose notices re-read the named model's row. `gone()`: the
 * gate stopped, or its pool is ending (`onPoolGone` then stops the gate).
 */
export function listenForPauses(db: PgDb, rows: PauseRows, o: { pollMs: number; stopped: () => boolean; onPoolGone: () => void }): PauseListener {
  let client: pg.Client | null = null;
  let delay = RECONNECT_MIN_MS;
  let told = false;
  let onListening!: () => void;
  const listening = new Promise<void>((r) => (onListening = r));
  const poolGone = () => db.pool.ending || db.pool.ended;
  const lostOutage = (err: unknown) => {
    if (!told)
      console.error(
        `aqven: the rate-limit listener lost its PostgreSQL connection (${db.name}): ${err instanceof Error ? err.message : 'closed'}; reconnecting (the pauses are polled every ${o.pollMs / 1000} s meanwhile)`,
      );
    told = true;
    setTimeout(() => void connect(), delay).unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };
  const connect = async () => {
    if (o.stopped()) return;
    if (poolGone()) return void o.onPoolGone();
    // keepAlive: a connection the server or the network dropped without a word is noticed
    const c = new pg.Client({ connectionString: db.url, keepAlive: true, connectionTimeoutMillis: 10_000 });
    let gone = false;
    const lost = (err: unknown) => {
      if (gone) return;
      gone = true;
      if (client === c) client = null;
      void c.end().catch(() => undefined);
      if (o.stopped()) return;
      if (poolGone()) return void o.onPoolGone();
      lostOutage(err);
    };
    c.on('error', lost);
    c.on('end', () => lost(null));
    c.on('notification', (msg) => {
      if (msg.channel === PAUSE_CHANNEL && msg.payload) rows.reread(msg.payload);
    });
    try {
      await c.connect();
      unrefSocket(c);
      await c.query(LISTEN);
    } catch (err) {
      return lost(err);
    }
    if (o.stopped() || gone) return void c.end().catch(() => undefined);
    client = c;
    delay = RECONNECT_MIN_MS;
    told = false;
    onListening();
    void rows.readAll().catch(() => undefined);
  };
  void connect();
  return {
    listening,
    close: async () => {
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
