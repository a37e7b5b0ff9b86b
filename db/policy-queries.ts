// Policy revisions (DESIGN: Storage, `policy_revisions`): every save of an agent's policy form
// records the file as written and its diff against the file before, numbered per agent.
import { desc, eq, max, sql } from 'drizzle-orm';
import type { PolicyRevisionRow } from './schema';
import { transaction } from './tx';
import type { Db } from './types';

export function listPolicyRevisions(db: Db, agent: string, limit = 50): Promise<PolicyRevisionRow[]> {
  const { policyRevisions } = db.t;
  return db.q.select().from(policyRevisions).where(eq(policyRevisions.agent, agent)).orderBy(desc(policyRevisions.revision)).limit(limit);
}

/** The first key of the per-agent revision lock (PostgreSQL advisory locks: "pol" in ASCII); the second is the agent's hash. */
const REVISION_LOCK = 0x706f6c;

/**
 * Records the next revision (n + 1) of `agent` in one transaction, so two saves never share a
 * number: SQLite takes the write lock first (BEGIN IMMEDIATE); PostgreSQL — where two saves may
 * read the same last number at once, and no unique index would refuse the second — holds an
 * advisory lock on the agent until the commit, so the second save reads the number after the first.
 */
export async function recordPolicyRevision(
  db: Db,
  r: { agent: string; yaml: string; diff: string; author?: string | null; snapshotId?: number | null; createdAt?: number },
): Promise<PolicyRevisionRow> {
  const { policyRevisions } = db.t;
  return transaction(db, async (q) => {
    if (db.dialect === 'pg') {
      // a one-row select that only takes the lock; the read below is a later statement, so it
      // sees what the save that held the lock committed (READ COMMITTED)
      await q.select({ locked: sql`pg_advisory_xact_lock(${REVISION_LOCK}, hashtext(${r.agent}))` }).from(sql`(values (0)) as one`);
    }
    const last = (
      await q
        .select({ n: max(policyRevisions.revision) })
        .from(policyRevisions)
        .where(eq(policyRevisions.agent, r.agent))
    )[0];
    const [row] = await q
      .insert(policyRevisions)
      .values({
        agent: r.agent,
        revision: Number(last?.n ?? 0) + 1,
        yaml: r.yaml,
        diff: r.diff,
        author: r.author ?? null,
        snapshotId: r.snapshotId ?? null,
        createdAt: r.createdAt ?? Date.now(),
      })
      .returning();
    return row!;
  });
}
