// Policy revisions (DESIGN: Storage, `policy_revisions`): every save of an agent's policy form
// records the file as written and its diff against the file before, numbered per agent.
import { desc, eq, max } from 'drizzle-orm';
import type { Db } from './types';
import { policyRevisions, type PolicyRevisionRow } from './schema';

export function listPolicyRevisions(db: Db, agent: string, limit = 50): PolicyRevisionRow[] {
  return db.select().from(policyRevisions).where(eq(policyRevisions.agent, agent)).orderBy(desc(policyRevisions.revision)).limit(limit).all();
}

/** Records the next revision (n + 1) of `agent` in one transaction, so two saves never share a number. */
export function recordPolicyRevision(db: Db, r: { agent: string; yaml: string; diff: string; createdAt?: number }): PolicyRevisionRow {
  return db.transaction(
    (tx) => {
      const last = tx.select({ n: max(policyRevisions.revision) }).from(policyRevisions).where(eq(policyRevisions.agent, r.agent)).get();
      return tx
        .insert(policyRevisions)
        .values({ agent: r.agent, revision: (last?.n ?? 0) + 1, yaml: r.yaml, diff: r.diff, createdAt: r.createdAt ?? Date.now() })
        .returning()
        .get();
    },
    { behavior: 'immediate' },
  );
}
