// Rate-limit pauses (DESIGN: Storage, "Pauses in PostgreSQL mode"): a later pause wins, and is
// committed on the spot (the gate's interface is synchronous, and a pause is rare). SQLite reads a
// pause from the database on every call; PostgreSQL keeps the pauses it knows of (its own, and
// those other processes announced or the poll read: db/cluster-gate.ts), as a call cannot wait for
// the server here.
import { eq, sql } from 'drizzle-orm';
import { clusterGate } from '../cluster-gate';
import { bindColumns, valueStatement } from '../typed-sql';
import type { SqliteDb } from '../types';
import type { StoreContext } from './context';
import type { RunStore } from './types';

function sqlitePauseRead(db: SqliteDb) {
  const { rateLimitPauses: p } = db.t;
  const st = valueStatement<number, { model: string }>(
    db.$client,
    db.q
      .select({ until: p.pausedUntil })
      .from(p)
      .where(eq(p.model, sql.placeholder('model'))),
    bindColumns(p, ['model']),
  );
  return (model: string) => st.get({ model }) ?? null;
}

export function pauseFacts({ db, s, queue }: StoreContext): Pick<RunStore, 'setPause' | 'getPause' | 'refreshPauses' | 'clusterPauses'> {
  const readPause = db.dialect === 'sqlite' ? sqlitePauseRead(db) : null;
  const cluster = db.dialect === 'pg' ? clusterGate(db) : null;
  return {
    setPause: (model, until, reason, origin) => {
      queue.later(null, () =>
        s.setPause.run({
          model,
          pausedUntil: until,
          reason,
          setAt: origin?.setAt ?? null,
          serverWait: origin?.serverWait ?? null,
          askedMs: origin?.askedMs ?? null,
          maxWaitMs: origin?.maxWaitMs ?? null,
        }),
      );
      const committed = queue.commit();
      cluster?.noteOwnPause(model, until, committed);
    },
    getPause: (model) => (readPause ? readPause(model) : (cluster?.get(model) ?? null)),
    refreshPauses: async () => {
      await cluster?.refresh();
    },
    ...(cluster && { clusterPauses: cluster }),
  };
}
