// The cluster's claim on the probe after a pause (db/cluster-gate.ts): a claim on the row
// (probe_owner, probe_until) that one process wins, renews while its probe is out, and ends — a
// probe without a 429 deletes the row (every waiter in the cluster goes on), one with a 429 has set
// a new pause (which frees the claim). A dead prober's claim lapses `ttl` after its last renewal.
import { and, eq, isNull, lt, lte, or } from 'drizzle-orm';
import type { ProbeClaim, ProbeOutcome } from '@/lib/engine/types';
import { notifyPause, type PauseRows } from './pause-rows';
import type { PgDb } from './types';

export interface ProbeClaims {
  claimProbe(model: string, now: number): Promise<ProbeClaim>;
  probeDone(model: string, outcome: ProbeOutcome): void;
  /** stops renewing every claim held (the gate stops) */
  stop(): void;
}

export function probeClaims(db: PgDb, rows: PauseRows, owner: string, ttl: number): ProbeClaims {
  const p = db.t.rateLimitPauses;
  /** renewal of the claims this process holds */
  const claims = new Map<string, NodeJS.Timeout>();
  const ours = (model: string) => and(eq(p.model, model), eq(p.probeOwner, owner));

  /** renews the claim while the probe is out; `offset` carries the gate's clock onto the wall clock */
  const hold = (model: string, now: number) => {
    const offset = now - Date.now();
    const t = setInterval(() => {
      if (db.pool.ending || db.pool.ended) return void clearInterval(t);
      void db.q
        .update(p)
        .set({ probeUntil: Date.now() + offset + ttl })
        .where(ours(model))
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
      await rows.committed(model);
      const seq = rows.nextSeq();
      const won = await db.q
        .update(p)
        .set({ probeOwner: owner, probeUntil: now + ttl })
        .where(and(eq(p.model, model), lte(p.pausedUntil, now), or(isNull(p.probeOwner), isNull(p.probeUntil), lt(p.probeUntil, now))))
        .returning({ until: p.pausedUntil });
      if (won.length) {
        rows.apply(model, { until: won[0]!.until, owner }, seq);
        unhold(model);
        hold(model, now);
        return { kind: 'won' };
      }
      const row = await rows.readOne(model);
      if (!row) return { kind: 'none' };
      // a new pause: waited out first; else another process's probe is out until its claim lapses
      return { kind: 'taken', retryAt: row.until > now ? row.until : (row.probeUntil ?? now) + 1 };
    } catch {
      return { kind: 'won' }; // the database cannot be asked: the probe stays one per process
    }
  };

  /** the pause is over for everyone: the row goes (unless a new pause replaced it: the claim is no longer ours) */
  const endOk = async (model: string): Promise<boolean> => {
    const seq = rows.nextSeq();
    const gone = await db.q.delete(p).where(ours(model)).returning({ model: p.model });
    if (gone.length) rows.apply(model, null, seq);
    return gone.length > 0;
  };
  /** a 429's new pause frees the claim as it is written (setPause); this frees it otherwise */
  const endOther = async (model: string): Promise<boolean> => {
    await rows.committed(model);
    const seq = rows.nextSeq();
    const freed = await db.q.update(p).set({ probeOwner: null, probeUntil: null }).where(ours(model)).returning({ until: p.pausedUntil });
    if (freed.length) rows.apply(model, { until: freed[0]!.until, owner: null }, seq);
    return freed.length > 0;
  };

  return {
    claimProbe,
    probeDone: (model, outcome) => {
      unhold(model);
      void (async () => {
        if (await (outcome === 'ok' ? endOk(model) : endOther(model))) await notifyPause(db, model);
      })().catch(() => undefined); // a claim not ended lapses by itself
    },
    stop: () => {
      for (const t of claims.values()) clearInterval(t);
      claims.clear();
    },
  };
}
