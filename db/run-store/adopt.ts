// Take-over reads (DESIGN: Storage, "Leases"): a run this store adopts — a queued run a worker
// claimed, or a run taken over from a dead worker — has its kind, start, caller and (if never
// indexed) input read once, and the agents and starts of its open node runs, so that its feeds
// go on as if it had been started here. SQLite reads at once; PostgreSQL before the run's next
// commit, on the commit's connection, ahead of its fence checks.
import { and, eq, exists, inArray, sql } from 'drizzle-orm';
import type pg from 'pg';
import { budgetCaller } from '@/lib/shared/spend-budget';
import type { RunKind } from '../queries';
import { valueSearchText } from '../run-aggregates';
import type { Db } from '../types';
import type { Feeds } from './feeds';

type Row = Record<string, unknown>;

/** the reads of an adopted run, columns named as they are read back (either dialect's raw rows) */
function adoptQueries(db: Db, runId: string, nodeIds: readonly string[]) {
  const { runs, nodeRuns, searchDocs } = db.t;
  const q = db.q;
  // the input as its JSON text (PostgreSQL's json column would come back parsed)
  const input = db.dialect === 'pg' ? sql`${runs.input}::text` : sql`${runs.input}`;
  const indexed = exists(
    q
      .select({ one: sql`1` })
      .from(searchDocs)
      .where(and(eq(searchDocs.runId, runs.id), eq(searchDocs.field, 'input'))),
  );
  const head = q
    .select({
      kind: sql`${runs.kind}`.as('kind'),
      startedAt: sql`${runs.startedAt}`.as('started_at'),
      startedBy: sql`${runs.startedBy}`.as('started_by'),
      input: input.as('input'),
      indexed: sql`case when ${indexed} then 1 else 0 end`.as('indexed'),
    })
    .from(runs)
    .where(eq(runs.id, runId))
    .toSQL();
  const nodes = q
    .select({ id: sql`${nodeRuns.id}`.as('id'), agent: sql`${nodeRuns.agent}`.as('agent'), startedAt: sql`${nodeRuns.startedAt}`.as('started_at') })
    .from(nodeRuns)
    .where(inArray(nodeRuns.id, [...nodeIds]))
    .toSQL();
  return { head, nodes };
}

export function adoptReads(db: Db, feeds: Feeds) {
  /** PostgreSQL: adopted runs whose row (kind, input) and open node runs (agent) are read before their first commit */
  const unread = new Map<string, readonly string[]>();
  const learn = (runId: string, head: Row | undefined, nodes: Row[]) => {
    const run = feeds.runInfo.get(runId);
    if (!run || !head) return;
    run.kind = head.kind as RunKind;
    run.startedAt = Number(head.started_at);
    run.caller = budgetCaller(head.started_by as string | null);
    if (!Number(head.indexed) && typeof head.input === 'string') run.inputDoc = valueSearchText(JSON.parse(head.input));
    for (const row of nodes) {
      const n = feeds.nodeInfo.get(String(row.id));
      if (!n) continue;
      n.agent = String(row.agent);
      n.startedAt = row.started_at === null ? null : Number(row.started_at);
    }
  };
  return {
    unread,
    /** run `runId` (and its node runs `nodeIds`) was adopted: read now (SQLite) or before its next commit (PostgreSQL) */
    adopt: (runId: string, nodeIds: readonly string[]) => {
      if (db.dialect !== 'sqlite') return void unread.set(runId, nodeIds);
      const { head, nodes } = adoptQueries(db, runId, nodeIds);
      const c = db.$client;
      learn(runId, c.prepare(head.sql).get(head.params) as Row | undefined, nodeIds.length ? (c.prepare(nodes.sql).all(nodes.params) as Row[]) : []);
    },
    /** PostgreSQL: the adopted runs of a commit read first (their kind, input, open nodes' agents), on its connection */
    readPg: async (ids: string[], client: pg.PoolClient) => {
      for (const id of ids) {
        const nodeIds = unread.get(id);
        if (!nodeIds) continue;
        const run = adoptQueries(db, id, nodeIds);
        const [head, nodes] = await Promise.all([client.query<Row>(run.head.sql, run.head.params), nodeIds.length ? client.query<Row>(run.nodes.sql, run.nodes.params) : null]);
        learn(id, head.rows[0], nodes?.rows ?? []);
        unread.delete(id);
      }
    },
  };
}

export type AdoptReads = ReturnType<typeof adoptReads>;
